# The inputs whose defaults differ by scenario, declared once and linked into ai-training,
# molecular-dynamics and engineering-simulation. Each input defaults to null (or null attributes):
# what is left unset takes the scenario's default from local.defaults, the scenario's row of scenario_defaults.tf.
# The descriptions list each scenario's defaults, so a reader of any one module sees them.

variable "cidr_block" {
  description = "IPv4 block of the cluster's own VPC, inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16. Null: 10.20.0.0/16 (ai-training), 10.21.0.0/16 (molecular-dynamics), 10.22.0.0/16 (engineering-simulation)."
  type        = string
  default     = null

  validation {
    condition     = var.cidr_block == null || can(cidrhost(var.cidr_block, 0))
    error_message = "cidr_block must be a CIDR block such as \"10.20.0.0/16\"."
  }
}

variable "zone_ids" {
  description = "Zones of the network; pools fall back to the next zone when stock runs out. Null: the region's first zone (ai-training and molecular-dynamics: low-latency placement keeps the pools in one zone anyway) or first two zones (engineering-simulation)."
  type        = list(string)
  default     = null
}

variable "network" {
  description = "Interconnect: erdma (eRDMA between nodes for NCCL and MPI; default on for ai-training and molecular-dynamics, off for engineering-simulation, whose V100 types have no elastic RDMA), placement (low_latency: ECS LowLatency deployment sets of up to 20 nodes, the default of ai-training and molecular-dynamics; spread: every node on its own physical server so one host failure costs one node, the default of engineering-simulation; none), placement_groups (null: enough for every node), hpc_cluster (for SCC types; default false)."
  type = object({
    erdma            = optional(bool)
    placement        = optional(string)
    placement_groups = optional(number)
    hpc_cluster      = optional(bool)
  })
  default  = {}
  nullable = false
}

variable "gpu_model" {
  description = "GPU model of the worker pools that set neither gpu_model nor instance_type. Null: the scenario's target GPU. ai-training: A100-80GB (>= 80 GB per GPU, NVLink 600 GB/s; H100 maps to gn8v/ebmgn8v, Hopper class, with a warning). molecular-dynamics: A100-80GB, which meets the scenario's FP64 and >= 1 TB/s memory bandwidth (A40, served by L20 on gn8is, or A10 are budget options the findings flag). engineering-simulation: V100S, served by gn6e (V100 SXM2 32 GB with FP64 and ECC; T4 is a budget option the findings flag, A100 gives more FP64)."
  type        = string
  default     = null
}

locals {
  cidr_block = coalesce(var.cidr_block, local.defaults.cidr_block)
  network    = merge(local.defaults.network, { for k, v in var.network : k => v if v != null })
  gpu_model  = coalesce(var.gpu_model, local.defaults.gpu_model)
}
