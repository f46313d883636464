# A small eRDMA network for the module's tests.
terraform {
  required_providers {
    gpucluster = {
      source = "gpucluster/gpucluster"
    }
  }
}

variable "name" {
  description = "Network name."
  type        = string
}

data "gpucluster_zones" "region" {}

resource "gpucluster_rdma_network" "test" {
  name       = var.name
  cidr_block = "10.61.0.0/16"
  zone_ids   = slice(data.gpucluster_zones.region.ids, 0, 1)
  erdma      = true
}

output "network_id" {
  description = "The network's id."
  value       = gpucluster_rdma_network.test.id
}
