terraform {
  required_version = ">= 1.7.0"

  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = ">= 0.1.0"
    }
  }
}
