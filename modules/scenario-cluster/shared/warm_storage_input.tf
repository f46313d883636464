# The warm tier's input, linked into the scenario modules that have one (molecular-dynamics,
# engineering-simulation). Unset attributes take local.defaults.warm_storage (scenario_defaults.tf).

variable "warm_storage" {
  description = "Warm tier for trajectories, checkpoints, meshes, cases and results: NAS chosen to meet min_throughput_gbps (default 10: the scenario's target of >= 10 GB/s; NAS Capacity states up to 10 GB/s in the best zones, so the provider warns that it cannot verify it). capacity_tib defaults to 500."
  type = object({
    capacity_tib        = optional(number)
    min_throughput_gbps = optional(number)
    backend             = optional(string)
  })
  default  = {}
  nullable = false
}

locals {
  warm_storage = merge(local.defaults.warm_storage, { for k, v in var.warm_storage : k => v if v != null })
}
