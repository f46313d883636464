# The scenario modules give every input their scenario's default; this module types and checks them,
# once. The inputs every scenario module declares alike are in common_variables.tf, linked from
# shared/ like theirs.

variable "scenario" {
  description = "Research scenario: ai_training, molecular_dynamics or engineering_simulation."
  type        = string

  validation {
    condition     = contains(["ai_training", "molecular_dynamics", "engineering_simulation"], var.scenario)
    error_message = "scenario must be one of ai_training, molecular_dynamics, engineering_simulation."
  }
}

variable "cidr_block" {
  description = "IPv4 block of the cluster's own VPC, inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16."
  type        = string
}

variable "zone_ids" {
  description = "Zones of the network. Null: the region's first zone_count zones."
  type        = list(string)
  default     = null
}

variable "zone_count" {
  description = "How many of the region's zones the network takes when zone_ids is null."
  type        = number
  default     = 1
}

variable "network" {
  description = "Interconnect: erdma, placement (none, low_latency or spread), placement_groups (null: enough for every node), hpc_cluster, egress_mode (the network's egress.mode; null: nat, a NAT gateway and EIP of the network's own)."
  type = object({
    erdma            = bool
    placement        = string
    placement_groups = optional(number)
    hpc_cluster      = optional(bool, false)
    egress_mode      = optional(string)
  })
  nullable = false

  validation {
    condition     = contains(["none", "low_latency", "spread"], var.network.placement)
    error_message = "network.placement must be none, low_latency or spread."
  }
}

variable "gpu_model" {
  description = "GPU model of the worker pools that set neither gpu_model nor instance_type."
  type        = string
}

variable "worker_pools" {
  description = "GPU worker pools keyed by a short name; see cluster-core's worker_pools, which declares their type and checks them. Unset gpu_model and gpus_per_node come from the module's."
  # Untyped here on purpose: the pool object type is declared once, in cluster-core's worker_pools
  # (with its optional attributes' defaults and checks); this module only fills gpu_model and
  # gpus_per_node and passes the pools on, so a type error names cluster-core's variable.
  type     = any
  nullable = false
}

variable "control_plane" {
  description = "Kubernetes control plane; see cluster-core's control_plane."
  type = object({
    enabled       = optional(bool, true)
    instance_type = optional(string, "ecs.g7.2xlarge")
    size          = optional(number, 1)
    image_id      = optional(string)
    pod_subnet    = optional(string, "10.244.0.0/16")
    api_endpoint  = optional(string)
    # An external control plane's API server name; see cluster-core's control_plane.
    api_server_name = optional(string)
    # The control-plane nodes' instance RAM role: the Cluster Autoscaler of the autoscaling
    # pools authenticates with it (no AccessKey in the cluster).
    ram_role_name = optional(string)
  })
  default  = {}
  nullable = false
}

variable "hot_storage" {
  description = "Hot tier (storage-tiers' hot) and, with node_local_disk, an ESSD PL3 disk on every worker sized for min_iops. Null: no hot tier."
  type = object({
    capacity_tib        = number
    min_throughput_gbps = number
    min_iops            = optional(number)
    node_local_disk     = optional(bool, false)
    backend             = optional(string)
  })
  default = null

  validation {
    condition     = var.hot_storage == null || try(var.hot_storage.capacity_tib >= 1, false)
    error_message = "hot_storage.capacity_tib must be at least 1 TiB (CPFS grows in 10 TiB steps)."
  }
  validation {
    condition     = var.hot_storage == null || try(var.hot_storage.min_iops <= 1000000, true)
    error_message = "hot_storage.min_iops above 1,000,000 is more than one ESSD PL3 disk gives: stripe several disks yourself and keep min_iops at 1000000."
  }
}

variable "warm_storage" {
  description = "Warm tier (storage-tiers' warm). Null: no warm tier."
  type = object({
    capacity_tib        = number
    min_throughput_gbps = number
    backend             = optional(string)
  })
  default = null

  validation {
    condition     = var.warm_storage == null || try(var.warm_storage.capacity_tib >= 1, false)
    error_message = "warm_storage.capacity_tib must be at least 1 TiB."
  }
}

variable "cold_storage" {
  description = "Cold tier (storage-tiers' cold): an OSS bucket with lifecycle transitions, optionally behind an Alluxio cache. Null: no cold tier."
  type = object({
    bucket_name   = optional(string)
    capacity_tib  = number
    force_destroy = optional(bool, false)
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
    condition     = var.cold_storage == null || try(var.cold_storage.capacity_tib >= 1, false)
    error_message = "cold_storage.capacity_tib must be at least 1 TiB."
  }
}

variable "monitoring" {
  description = "Alert rule settings; see cluster-core's monitoring."
  type = object({
    design_bandwidth_gbps = optional(number, 100)
    network_interface     = optional(string, "eth0")
  })
  default  = {}
  nullable = false
}

variable "hpa" {
  description = "Autoscale an inference Deployment on GPU utilisation; see cluster-core's hpa. Null: no HPA."
  type = object({
    deployment              = string
    min_replicas            = number
    max_replicas            = number
    target_gpu_util_percent = optional(number)
  })
  default = null
}


variable "kueue" {
  description = "Kueue with the add-ons and the team queues (teams by worker_pools key); see cluster-core's kueue. The simulation modules set it from teams unless apply_kueue = false (unset: whenever bundles are on). Null: no Kueue."
  type = object({
    teams = optional(map(object({
      gpus      = number
      namespace = optional(string)
      pool      = optional(string)
    })), {})
  })
  default = null
}
