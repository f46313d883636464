# The cold tier's input, linked into the scenario modules that have one (ai-training,
# engineering-simulation). Unset attributes take local.defaults.cold_storage (scenario_defaults.tf).

variable "cold_storage" {
  description = "Cold tier: an OSS bucket (the scenario's target: >= 1 PB; capacity_tib defaults to 1024) with lifecycle transitions (default: IA after 30 days, Archive after 90, Cold Archive after 365), behind an Alluxio cache (ai-training default: 4096 GiB sized for a 90% hit rate; engineering-simulation: none unless cache = { size_gib = ... }). bucket_name defaults to <name>-cold; bucket names are global. force_destroy defaults to false."
  type = object({
    bucket_name   = optional(string)
    capacity_tib  = optional(number)
    force_destroy = optional(bool)
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
  default  = {}
  nullable = false
}

locals {
  cold_storage = merge(local.defaults.cold_storage, { for k, v in var.cold_storage : k => v if v != null })
}
