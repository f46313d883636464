# The storage tiers a scenario asks for. Each tier is optional; the provider picks the backend and
# capacity that meet the targets, and says in sizing_notes how.

locals {
  cold_bucket = var.cold == null ? null : coalesce(var.cold.bucket_name, "${var.name}-cold")
}

resource "gpucluster_storage_tier" "hot" {
  count = var.hot == null ? 0 : 1

  name                = "${var.name}-hot"
  tier                = "hot"
  network_id          = var.network_id
  capacity_tib        = var.hot.capacity_tib
  min_throughput_gbps = var.hot.min_throughput_gbps
  min_iops            = var.hot.min_iops
  backend             = var.hot.backend
  encryption          = var.hot.encryption
  tags                = var.hot.tags

  lifecycle {
    precondition {
      condition     = var.network_id != null
      error_message = "The hot tier needs network_id: pass the gpucluster_rdma_network id its mount target goes in."
    }
  }
}

resource "gpucluster_storage_tier" "warm" {
  count = var.warm == null ? 0 : 1

  name                = "${var.name}-warm"
  tier                = "warm"
  network_id          = var.network_id
  capacity_tib        = var.warm.capacity_tib
  min_throughput_gbps = var.warm.min_throughput_gbps
  backend             = var.warm.backend
  encryption          = var.warm.encryption
  tags                = var.warm.tags

  lifecycle {
    precondition {
      condition     = var.network_id != null
      error_message = "The warm tier needs network_id: pass the gpucluster_rdma_network id its mount target goes in."
    }
  }
}

resource "gpucluster_storage_tier" "cold" {
  count = var.cold == null ? 0 : 1

  name          = local.cold_bucket
  tier          = "cold"
  capacity_tib  = var.cold.capacity_tib
  encryption    = var.cold.encryption
  force_destroy = var.cold.force_destroy
  tags          = var.cold.tags

  object_lifecycle = var.cold.object_lifecycle

  cache = var.cold.cache == null ? null : {
    engine          = "alluxio"
    size_gib        = var.cold.cache.size_gib
    target_hit_rate = var.cold.cache.target_hit_rate
    hot_dataset_gib = var.cold.cache.hot_dataset_gib
  }
}

locals {
  file_tiers = merge(
    { for t in gpucluster_storage_tier.hot : "hot" => t },
    { for t in gpucluster_storage_tier.warm : "warm" => t },
  )
  all_tiers = merge(local.file_tiers, { for t in gpucluster_storage_tier.cold : "cold" => t })
}
