# A first stack: a research network and a small AI-training pool in it. `make demo` applies it
# against the offline emulator; leave out GPUCLUSTER_ENDPOINT to build it on Alibaba Cloud.
terraform {
  required_version = ">= 1.7.0"
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = ">= 0.1.0"
    }
  }
}

# Region, credentials and endpoint come from the environment (ALIBABA_CLOUD_REGION,
# ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET, GPUCLUSTER_ENDPOINT).
provider "gpucluster" {}

data "gpucluster_zones" "region" {}

# What the catalog recommends for large-model training on A100-class GPUs, and why.
data "gpucluster_scenario" "training" {
  name          = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  node_count    = 2
}

resource "gpucluster_rdma_network" "research" {
  name        = "quickstart"
  cidr_block  = "10.30.0.0/16"
  zone_ids    = slice(data.gpucluster_zones.region.ids, 0, 2)
  admin_cidrs = ["10.99.0.0/24"]
  erdma       = true # NCCL over eRDMA between nodes: the scenario's target of a 100 Gbit/s RDMA fabric
}

resource "gpucluster_node_pool" "training" {
  name               = "llm-train"
  network_id         = gpucluster_rdma_network.research.id
  scenario           = "ai_training"
  gpu_model          = "A100"
  gpus_per_node      = 8
  size               = 2
  auto_release_after = "72h"
}

output "instance_type" {
  description = "Instance type the catalog chose for the pool."
  value       = gpucluster_node_pool.training.instance_type
}

output "why" {
  description = "The catalog's reasons for its first choice."
  value       = data.gpucluster_scenario.training.candidates[0].reasons
}

output "nodes" {
  description = "The pool's nodes."
  value       = [for n in gpucluster_node_pool.training.nodes : "${n.id} ${n.zone_id} ${n.private_ip} ${n.status}"]
}

output "findings" {
  description = "What the catalog says about this pool against the scenario's requirements."
  value       = [for f in gpucluster_node_pool.training.findings : "${f.severity}: ${f.message}"]
}

output "estimated_hourly_price" {
  description = "Price of the pool per hour (DescribePrice; the emulator's own illustrative figures)."
  value       = gpucluster_node_pool.training.estimated_hourly_price
}

output "nccl_env" {
  description = "NCCL settings for jobs on this network."
  value       = gpucluster_rdma_network.research.nccl_env
}
