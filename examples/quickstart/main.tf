# A first stack: what the provider sees of a region. `make demo` applies it against the offline
# emulator; point the provider at Alibaba Cloud by leaving `endpoint` out.
terraform {
  required_version = ">= 1.7.0"
  required_providers {
    gpucluster = {
      source = "gpucluster/gpucluster"
    }
  }
}

# Region, credentials and endpoint come from the environment (ALIBABA_CLOUD_REGION,
# ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET, GPUCLUSTER_ENDPOINT).
provider "gpucluster" {}

data "gpucluster_zones" "region" {}

output "region" {
  description = "Region the provider works in."
  value       = data.gpucluster_zones.region.region
}

output "zones" {
  description = "Zones a research network can span."
  value       = data.gpucluster_zones.region.ids
}
