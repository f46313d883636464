# Data in three layers: hot data on CPFS near the GPUs, warm data on NAS Capacity, cold data
# in OSS with lifecycle transitions and an Alluxio cache in front.

resource "gpucluster_storage_tier" "hot" {
  name                = "train-hot"
  tier                = "hot"
  network_id          = gpucluster_rdma_network.training.id
  capacity_tib        = 50
  min_throughput_gbps = 10      # GB/s: CPFS advance_200 gives 200 MB/s per TiB
  min_iops            = 1000000 # per node, met by node-local ESSD PL3 (data_disk_hint)
}

resource "gpucluster_storage_tier" "warm" {
  name         = "train-warm"
  tier         = "warm"
  network_id   = gpucluster_rdma_network.training.id
  capacity_tib = 500
  tags         = { team = "research" }
}

resource "gpucluster_storage_tier" "cold" {
  name         = "train-cold-datasets-0001" # bucket names are global
  tier         = "cold"
  capacity_tib = 1024

  object_lifecycle = {
    ia_after_days           = 30
    archive_after_days      = 90
    cold_archive_after_days = 365
    expire_after_days       = 1825
  }

  cache = {
    engine          = "alluxio"
    size_gib        = 4096
    target_hit_rate = 0.9
    hot_dataset_gib = 4500
  }
}

# Feed the hot tier's node-local disk to the node pool, and mount the shared tiers.
output "hot_data_disk" {
  description = "Node-local disk that meets the hot tier's IOPS target."
  value       = gpucluster_storage_tier.hot.data_disk_hint
}

output "mounts" {
  description = "fstab lines for the hot and warm file systems."
  value       = [gpucluster_storage_tier.hot.fstab_line, gpucluster_storage_tier.warm.fstab_line]
}

output "alluxio_site_properties" {
  description = "alluxio-site.properties for the cache in front of the cold tier."
  value       = gpucluster_storage_tier.cold.alluxio_properties
}
