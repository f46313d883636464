# Which Hopper-class types the provider's region offers, and where they are in stock.
data "gpucluster_instance_types" "hopper" {
  gpu_model     = "H100" # served by gn8v / ebmgn8v, with a warning in findings
  min_gpus      = 8
  in_stock_only = true
}

output "hopper_stock" {
  description = "Zones where each Hopper-class type is in stock."
  value       = { for t in data.gpucluster_instance_types.hopper.instance_types : t.name => t.available_zone_ids }
}

# Catalog types the region does not offer, and types the API knows but the catalog does not.
output "not_offered" {
  description = "Catalog types the region does not offer."
  value       = data.gpucluster_instance_types.hopper.not_offered
}

output "unknown_to_catalog" {
  description = "Types the API lists that the catalog does not know."
  value       = data.gpucluster_instance_types.hopper.unknown_instance_types
}
