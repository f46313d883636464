# What the first GPU worker registers with Kubernetes, read back from the user data ECS holds,
# and a check that it is what the pool reports.
variable "gpu_worker_id" {
  description = "A node of a pool with the built-in bootstrap, such as gpucluster_node_pool.gpu.nodes[0].id."
  type        = string
}

variable "reported_labels" {
  description = "The pool's node_labels."
  type        = map(string)
}

data "gpucluster_node_registration" "gpu" {
  instance_id = var.gpu_worker_id

  lifecycle {
    postcondition {
      condition     = self.labels == var.reported_labels
      error_message = "the node registers ${jsonencode(self.labels)}, the pool reports ${jsonencode(var.reported_labels)}"
    }
  }
}

output "registered_taints" {
  description = "Taints the node's kubelet registers with, such as nvidia.com/gpu:NoSchedule."
  value       = data.gpucluster_node_registration.gpu.taints
}

output "joins" {
  description = "init, join_control_plane or join, and the endpoint."
  value       = "${data.gpucluster_node_registration.gpu.action} ${data.gpucluster_node_registration.gpu.api_endpoint}"
}
