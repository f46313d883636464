# Defaults implement the ai_training scenario: A100 80 GB-class GPUs, 8 per node, NCCL
# over eRDMA in low-latency placement groups, a hot tier with 1M IOPS node-local flash, a 1 PiB
# cold bucket behind an Alluxio cache sized for a 90% hit rate, GPU utilisation alerts below 85%,
# idle jobs reclaimed after 72 h. Every default can be overridden.

variable "cidr_block" {
  description = "IPv4 block of the cluster's own VPC, inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16."
  type        = string
  default     = "10.20.0.0/16"

  validation {
    condition     = can(cidrhost(var.cidr_block, 0))
    error_message = "cidr_block must be a CIDR block such as \"10.20.0.0/16\"."
  }
}

variable "zone_ids" {
  description = "Zones of the network. Null: the region's first zone (low-latency placement keeps the pools in one zone anyway)."
  type        = list(string)
  default     = null
}

variable "network" {
  description = "Interconnect: eRDMA between nodes (NCCL), placement (low_latency: ECS LowLatency deployment sets of up to 20 nodes), placement_groups (null: enough for every node), hpc_cluster (for SCC types)."
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
  description = "GPU model of the worker pools that set neither gpu_model nor instance_type. The scenario's target GPU: A100 80 GB class (>= 80 GB per GPU, NVLink 600 GB/s); H100 maps to gn8v/ebmgn8v (Hopper class) with a warning."
  type        = string
  default     = "A100-80GB"
}

variable "hot_storage" {
  description = "Hot tier: a parallel file system near the GPUs (CPFS chosen to meet min_throughput_gbps) plus, with node_local_disk, an ESSD PL3 disk on every worker sized for min_iops (the scenario's target of >= 1M IOPS flash)."
  type = object({
    capacity_tib        = optional(number, 100)
    min_throughput_gbps = optional(number, 20)
    min_iops            = optional(number, 1000000)
    node_local_disk     = optional(bool, true)
    backend             = optional(string)
  })
  default  = {}
  nullable = false
}

variable "cold_storage" {
  description = "Cold tier: an OSS bucket (the scenario's target: >= 1 PB) with lifecycle transitions, behind an Alluxio cache sized for a 90% hit rate. bucket_name defaults to <name>-cold; bucket names are global."
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
    }), { size_gib = 4096, target_hit_rate = 0.9 })
  })
  default  = {}
  nullable = false
}

