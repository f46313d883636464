# The smallest-footprint type with 8 A100 80 GB-class GPUs: "ecs.gn7e-c16g1.32xlarge".
output "a100_8x" {
  description = "Instance type for 8 A100 80 GB GPUs per node."
  value       = provider::gpucluster::instance_type_for("A100-80GB", 8)
}

# A model no family offers by name maps to its substitute: H100 -> "ecs.gn8v-8x.16xlarge".
output "h100_8x" {
  description = "Instance type for 8 H100-class GPUs per node (a substitute)."
  value       = provider::gpucluster::instance_type_for("H100", 8)
}
