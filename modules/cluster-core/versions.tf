terraform {
  required_version = ">= 1.11.0"

  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = ">= 0.1.0"
    }
  }
}
