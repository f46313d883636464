# Defaults implement the engineering_simulation scenario (CFD / FEA): double precision and
# ECC memory (V100 32 GB, gn6e: 7.8 TFLOPS FP64; the matrix's V100S, which Alibaba offers as V100),
# 8 per node, nodes spread over distinct physical servers for stability (the scenario's MTBF target), a warm
# tier of >= 10 GB/s and a 1 PiB cold bucket with lifecycle transitions, GPU utilisation alerts
# below 70%, idle jobs reclaimed after 72 h. Every default can be overridden.

variable "cidr_block" {
  description = "IPv4 block of the cluster's own VPC, inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16."
  type        = string
  default     = "10.22.0.0/16"

  validation {
    condition     = can(cidrhost(var.cidr_block, 0))
    error_message = "cidr_block must be a CIDR block such as \"10.22.0.0/16\"."
  }
}

variable "zone_ids" {
  description = "Zones of the network; pools fall back to the next zone when stock runs out. Null: the region's first two zones."
  type        = list(string)
  default     = null
}

variable "network" {
  description = "Interconnect: eRDMA between nodes (off: V100 types have no elastic RDMA), placement (spread: every node on its own physical server, so one host failure costs one node), placement_groups (null: enough for every node), hpc_cluster (for SCC types)."
  type = object({
    erdma            = optional(bool, false)
    placement        = optional(string, "spread")
    placement_groups = optional(number)
    hpc_cluster      = optional(bool, false)
  })
  default  = {}
  nullable = false
}

variable "gpu_model" {
  description = "GPU model of the worker pools that set neither gpu_model nor instance_type. V100S (the scenario's recommended GPU) is served by gn6e, V100 SXM2 32 GB with FP64 and ECC; T4 is a budget option the findings flag (no usable FP64); A100 for more FP64 throughput."
  type        = string
  default     = "V100S"
}

variable "warm_storage" {
  description = "Warm tier for meshes, cases and results: NAS chosen to meet min_throughput_gbps (the scenario's target of >= 10 GB/s; NAS Capacity states up to 10 GB/s in the best zones, so the provider warns that it cannot verify it)."
  type = object({
    capacity_tib        = optional(number, 500)
    min_throughput_gbps = optional(number, 10)
    backend             = optional(string)
  })
  default  = {}
  nullable = false
}

variable "cold_storage" {
  description = "Cold tier: an OSS bucket (the scenario's target: >= 1 PB) with lifecycle transitions, optionally behind an Alluxio cache (cache = { size_gib = ... }). bucket_name defaults to <name>-cold; bucket names are global."
  type = object({
    bucket_name   = optional(string)
    capacity_tib  = optional(number, 1024)
    force_destroy = optional(bool, false)
    object_lifecycle = optional(object({
      ia_after_days           = optional(number)
      archive_after_days      = optional(number)
      cold_archive_after_days = optional(number)
      expire_after_days       = optional(number)
    }), { ia_after_days = 30, archive_after_days = 90, cold_archive_after_days = 365 })
    cache = optional(object({
      size_gib        = number
      target_hit_rate = optional(number, 0.9)
      hot_dataset_gib = optional(number)
    }))
  })
  default  = {}
  nullable = false
}

