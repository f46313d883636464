variable "name" {
  description = "Prefix of every tier's name (3-40 lowercase letters, digits and hyphens). Tiers are named <name>-hot, <name>-warm; the bucket <name>-cold unless cold.bucket_name says otherwise."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$", var.name))
    error_message = "name must be 3-40 lowercase letters, digits and hyphens, not starting or ending with a hyphen (for example \"llm-train\"): it prefixes file system and bucket names."
  }
}

variable "network_id" {
  description = "Id of the gpucluster_rdma_network whose first vSwitch gets the hot and warm mount targets. Needed when hot or warm is set."
  type        = string
  default     = null
}

variable "hot" {
  description = "Hot tier near the GPUs (CPFS or NAS Extreme, chosen by the provider to meet the targets), plus a node-local ESSD PL3 disk per node sized for min_iops (data_disk_hint). Null: no hot tier."
  type = object({
    capacity_tib        = number
    min_throughput_gbps = optional(number)
    min_iops            = optional(number)
    backend             = optional(string)
    encryption          = optional(bool, true)
    tags                = optional(map(string), {})
  })
  default = null

  validation {
    condition     = var.hot == null || try(var.hot.capacity_tib >= 1, false)
    error_message = "hot.capacity_tib must be at least 1 (TiB); CPFS grows in 10 TiB steps, so give the size you need."
  }
  validation {
    condition     = var.hot == null || try(var.hot.min_iops == null || (var.hot.min_iops >= 1 && var.hot.min_iops <= 1000000), false)
    error_message = "hot.min_iops must be between 1 and 1,000,000: it is met per node by one ESSD PL3 disk, whose ceiling is 1,000,000 IOPS. For more, stripe several disks yourself and leave min_iops at 1000000."
  }
}

variable "warm" {
  description = "Warm shared tier (NAS Capacity or another NAS class chosen to meet min_throughput_gbps). Null: no warm tier."
  type = object({
    capacity_tib        = number
    min_throughput_gbps = optional(number)
    backend             = optional(string)
    encryption          = optional(bool, true)
    tags                = optional(map(string), {})
  })
  default = null

  validation {
    condition     = var.warm == null || try(var.warm.capacity_tib >= 1, false)
    error_message = "warm.capacity_tib must be at least 1 (TiB)."
  }
}

variable "cold" {
  description = "Cold tier: an OSS bucket with lifecycle transitions and, optionally, an Alluxio cache in front of it. Null: no cold tier."
  type = object({
    bucket_name   = optional(string)
    capacity_tib  = number
    encryption    = optional(bool, true)
    force_destroy = optional(bool, false)
    tags          = optional(map(string), {})
    object_lifecycle = optional(object({
      ia_after_days           = optional(number)
      archive_after_days      = optional(number)
      cold_archive_after_days = optional(number)
      expire_after_days       = optional(number)
    }))
    cache = optional(object({
      size_gib        = number
      target_hit_rate = optional(number, 0.9)
      hot_dataset_gib = optional(number)
    }))
  })
  default = null

  validation {
    condition     = var.cold == null || try(var.cold.bucket_name == null || can(regex("^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", var.cold.bucket_name)), false)
    error_message = "cold.bucket_name must be 3-63 lowercase letters, digits and hyphens; bucket names are global, so add something unique such as your institute's name."
  }
  validation {
    condition     = var.cold == null || try(var.cold.cache == null || (var.cold.cache.target_hit_rate > 0 && var.cold.cache.target_hit_rate <= 1), false)
    error_message = "cold.cache.target_hit_rate is a fraction between 0 and 1, such as 0.9 for the scenario's target of a 90% hit rate."
  }
}
