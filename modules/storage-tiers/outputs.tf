output "ids" {
  description = "Id of each tier created, keyed hot, warm, cold: the file system id, or the bucket name for cold."
  value       = { for k, t in local.all_tiers : k => t.id }
}

output "backends" {
  description = "Backend the provider chose for each tier, such as cpfs_advance_200 or nas_capacity."
  value       = { for k, t in local.all_tiers : k => t.backend }
}

output "mount_commands" {
  description = "Shell command that mounts each file tier (hot, warm) at /mnt/<tier name>."
  value       = { for k, t in local.file_tiers : k => t.mount_command }
}

output "fstab_lines" {
  description = "The same mounts as /etc/fstab lines, hot first: feed them to the node bootstrap."
  value       = [for k in ["hot", "warm"] : local.file_tiers[k].fstab_line if contains(keys(local.file_tiers), k)]
}

output "hot_data_disk" {
  description = "Hot tier: the node-local ESSD PL3 disk per node that reaches min_iops, as a gpucluster_node_pool data_disks entry; null without a hot tier or min_iops."
  value = try(gpucluster_storage_tier.hot[0].data_disk_hint.size_gib, null) == null ? null : {
    category          = gpucluster_storage_tier.hot[0].data_disk_hint.category
    performance_level = gpucluster_storage_tier.hot[0].data_disk_hint.performance_level
    size_gib          = gpucluster_storage_tier.hot[0].data_disk_hint.size_gib
  }
}

output "alluxio_properties" {
  description = "Cold tier with a cache: alluxio-site.properties mounting the bucket as Alluxio's root (no credentials in it); null otherwise."
  value       = try(gpucluster_storage_tier.cold[0].alluxio_properties, null)
}

output "expected" {
  description = "Per tier: provisioned capacity (TiB), expected throughput (GB/s) and IOPS where the vendor publishes a formula (null where not), and the sizing notes."
  value = { for k, t in local.all_tiers : k => {
    provisioned_capacity_tib = t.provisioned_capacity_tib
    throughput_gbps          = t.expected_throughput_gbps
    iops                     = t.expected_iops
    sizing_notes             = t.sizing_notes
  } }
}

output "hourly_prices" {
  description = "List price per hour (CNY) of each tier, keyed hot, warm, cold: provisioned capacity x the vendor's price per GiB-month / 720. Null for a backend whose price the provider could not source (see gpucluster_storage_tier.estimated_hourly_price)."
  value       = { for k, t in local.all_tiers : k => t.estimated_hourly_price }
}

output "estimated_hourly_price" {
  description = "List price per hour (CNY) of the priced tiers together; 0 without tiers. Tiers with a null price (unsourced backend) are left out, and listed in unpriced."
  value       = sum(concat([0], [for k, t in local.all_tiers : t.estimated_hourly_price if t.estimated_hourly_price != null]))
}

output "unpriced" {
  description = "Tiers (hot, warm, cold) whose backend has no sourced price, so estimated_hourly_price leaves them out."
  value       = [for k, t in local.all_tiers : k if t.estimated_hourly_price == null]
}
