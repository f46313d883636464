# The zones of the provider's region, to spread a network over.
data "gpucluster_zones" "all" {}

output "zone_ids" {
  description = "Zone ids of the region, such as cn-wulanchabu-a."
  value       = data.gpucluster_zones.all.ids
}

output "zone_names" {
  description = "Console name of each zone."
  value       = { for z in data.gpucluster_zones.all.zones : z.id => z.local_name }
}
