# Defaults implement the molecular_dynamics scenario: GPUs with double precision and >= 1 TB/s
# memory bandwidth (A100 80 GB class: 9.7 TFLOPS FP64, 2 TB/s), 8 per node, MPI over eRDMA in
# low-latency placement groups (latency target <= 1 us), a hot tier with 1M IOPS node-local flash
# and a warm tier of >= 10 GB/s, GPU utilisation alerts below 70%, idle jobs reclaimed after 72 h.
# The scenario's recommended GPUs, A40 and A10, miss its own FP64 and bandwidth targets: set
# gpu_model = "A40" as a budget option and the findings say what falls short.

variable "cidr_block" {
  description = "IPv4 block of the cluster's own VPC, inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16."
  type        = string
  default     = "10.21.0.0/16"

  validation {
    condition     = can(cidrhost(var.cidr_block, 0))
    error_message = "cidr_block must be a CIDR block such as \"10.21.0.0/16\"."
  }
}

variable "zone_ids" {
  description = "Zones of the network. Null: the region's first zone (low-latency placement keeps the pools in one zone anyway)."
  type        = list(string)
  default     = null
}

variable "network" {
  description = "Interconnect: eRDMA between nodes (MPI and NCCL), placement (low_latency: ECS LowLatency deployment sets of up to 20 nodes), placement_groups (null: enough for every node), hpc_cluster (for SCC types)."
  type = object({
    erdma            = optional(bool, true)
    placement        = optional(string, "low_latency")
    placement_groups = optional(number)
    hpc_cluster      = optional(bool, false)
  })
  default  = {}
  nullable = false
}

variable "gpu_model" {
  description = "GPU model of the worker pools that set neither gpu_model nor instance_type. A100 80 GB class meets the scenario's FP64 and >= 1 TB/s memory bandwidth; the matrix's A40 (served by L20, gn8is) or A10 are budget options the findings flag."
  type        = string
  default     = "A100-80GB"
}

variable "hot_storage" {
  description = "Hot tier: a parallel file system near the GPUs (CPFS chosen to meet min_throughput_gbps) plus, with node_local_disk, an ESSD PL3 disk on every worker sized for min_iops (the scenario's target of >= 1M IOPS flash)."
  type = object({
    capacity_tib        = optional(number, 50)
    min_throughput_gbps = optional(number, 10)
    min_iops            = optional(number, 1000000)
    node_local_disk     = optional(bool, true)
    backend             = optional(string)
  })
  default  = {}
  nullable = false
}

variable "warm_storage" {
  description = "Warm tier for trajectories and checkpoints: NAS chosen to meet min_throughput_gbps (the scenario's target of >= 10 GB/s; NAS Capacity states up to 10 GB/s in the best zones, so the provider warns that it cannot verify it)."
  type = object({
    capacity_tib        = optional(number, 500)
    min_throughput_gbps = optional(number, 10)
    backend             = optional(string)
  })
  default  = {}
  nullable = false
}

