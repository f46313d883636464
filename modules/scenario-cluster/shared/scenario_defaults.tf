# Every scenario's defaults, one table, linked into ai-training, molecular-dynamics and
# engineering-simulation. A scenario module names its scenario (local.scenario in its main.tf);
# what the user leaves unset (null) takes the row of that scenario here. The inputs' descriptions
# (scenario_inputs.tf, *_storage_input.tf) say the same figures: change both together.

locals {
  scenario_defaults = {
    ai_training = {
      zone_count = 1
      cidr_block = "10.20.0.0/16"
      network    = { erdma = true, placement = "low_latency", placement_groups = null, hpc_cluster = false }
      gpu_model  = "A100-80GB"
      hot_storage = {
        capacity_tib = 100, min_throughput_gbps = 20, min_iops = 1000000, node_local_disk = true, backend = null
      }
      warm_storage = null
      cold_storage = {
        bucket_name      = null
        capacity_tib     = 1024
        force_destroy    = false
        object_lifecycle = { ia_after_days = 30, archive_after_days = 90, cold_archive_after_days = 365, expire_after_days = null }
        cache            = { size_gib = 4096, target_hit_rate = 0.9, hot_dataset_gib = null }
      }
    }
    molecular_dynamics = {
      zone_count = 1
      cidr_block = "10.21.0.0/16"
      network    = { erdma = true, placement = "low_latency", placement_groups = null, hpc_cluster = false }
      gpu_model  = "A100-80GB"
      hot_storage = {
        capacity_tib = 50, min_throughput_gbps = 10, min_iops = 1000000, node_local_disk = true, backend = null
      }
      warm_storage = { capacity_tib = 500, min_throughput_gbps = 10, backend = null }
      cold_storage = null
    }
    engineering_simulation = {
      zone_count   = 2
      cidr_block   = "10.22.0.0/16"
      network      = { erdma = false, placement = "spread", placement_groups = null, hpc_cluster = false }
      gpu_model    = "V100S"
      hot_storage  = null
      warm_storage = { capacity_tib = 500, min_throughput_gbps = 10, backend = null }
      cold_storage = {
        bucket_name      = null
        capacity_tib     = 1024
        force_destroy    = false
        object_lifecycle = { ia_after_days = 30, archive_after_days = 90, cold_archive_after_days = 365, expire_after_days = null }
        cache            = null
      }
    }
  }
  defaults   = local.scenario_defaults[local.scenario]
  zone_count = local.defaults.zone_count
}
