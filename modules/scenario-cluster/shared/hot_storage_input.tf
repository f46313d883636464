# The hot tier's input, linked into the scenario modules that have one (ai-training,
# molecular-dynamics). Unset attributes take local.defaults.hot_storage (scenario_defaults.tf).

variable "hot_storage" {
  description = "Hot tier: a parallel file system near the GPUs (CPFS chosen to meet min_throughput_gbps) plus, with node_local_disk (default true), an ESSD PL3 disk on every worker sized for min_iops (default 1000000: the scenario's target of >= 1M IOPS flash). Defaults: capacity_tib 100 and min_throughput_gbps 20 (ai-training), 50 and 10 (molecular-dynamics)."
  type = object({
    capacity_tib        = optional(number)
    min_throughput_gbps = optional(number)
    min_iops            = optional(number)
    node_local_disk     = optional(bool)
    backend             = optional(string)
  })
  default  = {}
  nullable = false
}

locals {
  hot_storage = merge(local.defaults.hot_storage, { for k, v in var.hot_storage : k => v if v != null })
}
