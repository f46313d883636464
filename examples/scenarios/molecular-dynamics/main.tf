# Molecular dynamics on Alibaba Cloud GPUs: one module call builds the network, the storage tiers, the
# control plane, the GPU workers and their bootstrap, and hands back the Kubernetes manifests and
# alert rules. Copy this directory and point `source` at a released copy of the module, such as
# "git::https://github.com/gpucluster/terraform-provider-gpucluster.git//modules/molecular-dynamics?ref=v0.1.0".
#
# `make demo` applies the ai-training example against the offline emulator. Against Alibaba Cloud,
# leave out GPUCLUSTER_ENDPOINT and set ALIBABA_CLOUD_REGION and your credentials.
terraform {
  required_version = ">= 1.11.0"

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

variable "name" {
  description = "Cluster name."
  type        = string
  default     = "md-sim"
}

variable "gpu_nodes" {
  description = "GPU worker nodes."
  type        = number
  default     = 2
}

variable "admin_cidrs" {
  description = "Blocks allowed to reach SSH and the Kubernetes API: your office or bastion."
  type        = list(string)
  default     = ["10.99.0.0/24"]
}

variable "join_token_salt" {
  description = "Secret the kubeadm join token is derived from; pass it as TF_VAR_join_token_salt from a secret store."
  type        = string
  default     = null
  sensitive   = true
}

variable "control_plane_ram_role" {
  description = "RAM role of the control-plane nodes (trusting ecs.aliyuncs.com): they fetch their bootstrap bundle from OSS with it. Null: \"<name>-control-plane\". Create it before applying; the module cannot create RAM roles."
  type        = string
  default     = null
}

variable "worker_ram_role" {
  description = "RAM role of the GPU workers (trusting ecs.aliyuncs.com, not the control plane's): they fetch their bootstrap bundle from OSS with it. Null: \"<name>-worker\"."
  type        = string
  default     = null
}

module "cluster" {
  source = "../../../modules/molecular-dynamics"

  name            = var.name
  admin_cidrs     = var.admin_cidrs
  join_token_salt = var.join_token_salt

  # Every node boots from a bootstrap bundle in a private OSS bucket (the default): its user data
  # is a small stub holding no key or token, and the node fetches the rest with its RAM role.
  control_plane    = { ram_role_name = coalesce(var.control_plane_ram_role, "${var.name}-control-plane") }
  bootstrap_bundle = { worker_ram_role_name = coalesce(var.worker_ram_role, "${var.name}-worker") }

  # The scenario's targets, the module's defaults: FP64 and >= 1 TB/s memory bandwidth (A100 80 GB class), MPI over
  # eRDMA, a hot tier with 1M-IOPS node-local flash and a 10 GB/s warm tier.
  worker_pools = {
    gpu = { size = var.gpu_nodes }
  }

  tags = {
    project = var.name
  }
}

output "instance_type" {
  description = "Instance type the catalog chose for the GPU workers."
  value       = module.cluster.instance_types["gpu"]
}

output "why" {
  description = "Why the catalog chose it."
  value       = module.cluster.instance_type_reasons["gpu"]
}

output "nodes" {
  description = "Every node: role, instance id, zone, private IP, status."
  value       = [for n in module.cluster.nodes : "${n.role} ${n.id} ${n.zone_id} ${n.private_ip} ${n.status} ${n.instance_type}"]
}

output "mount_command" {
  description = "How to mount the shared file system by hand (the nodes mount it at boot)."
  value       = module.cluster.mount_commands["warm"]
}

output "findings" {
  description = "What the catalog says about the pools against the scenario's requirements."
  value       = [for f in module.cluster.findings : "${f.pool}: ${f.severity}: ${f.message}"]
}

output "estimated_hourly_price" {
  description = "Price per hour, CNY, of the node pools (DescribePrice; the emulator's figures are illustrative) plus the storage tiers (list price per GiB-month)."
  value       = module.cluster.estimated_hourly_price
}

output "nccl_env" {
  description = "NCCL settings of jobs on the cluster."
  value       = module.cluster.nccl_env
}

output "storage" {
  description = "Backend and expected figures of each storage tier."
  value       = module.cluster.storage_sizing
}

output "manifests_yaml" {
  description = "Kubernetes manifests: kubectl apply -f after the control plane is up."
  value       = module.cluster.manifests_yaml
}

output "alert_rules_yaml" {
  description = "Prometheus rule file for the scenario's alerts."
  value       = module.cluster.alert_rules_yaml
}
