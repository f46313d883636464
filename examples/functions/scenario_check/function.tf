variable "instance_type" {
  description = "ECS instance type of the training pool."
  type        = string
  default     = "ecs.gn7e-c16g1.32xlarge"
}

variable "node_count" {
  description = "Nodes in the training pool."
  type        = number
  default     = 4
}

locals {
  training_check = provider::gpucluster::scenario_check("ai_training", var.instance_type, var.node_count)
}

# Refuse at plan time what cannot work; surface what falls short.
check "training_instance_type" {
  assert {
    condition     = length(local.training_check.errors) == 0
    error_message = join("\n", local.training_check.errors)
  }
}

output "training_warnings" {
  description = "Where the pool falls short of the ai_training targets."
  value       = local.training_check.warnings
}
