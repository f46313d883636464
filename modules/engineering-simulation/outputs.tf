# The outputs every scenario shares are in common_outputs.tf (linked from
# ../scenario-cluster/shared); this scenario has a cold tier and so its Alluxio properties.

output "alluxio_properties" {
  description = "alluxio-site.properties for the cache in front of the cold bucket; null without cold_storage.cache."
  value       = module.scenario.storage.alluxio_properties
}
