# A helper for the scenario modules' tests (tofu test / terraform test): what the first node of
# each pool registers with Kubernetes, read back from the user data ECS holds for it through
# gpucluster_node_registration. The tests compare it with what the module reports
# (worker_pools[*].node_labels / node_taints), so an output that drifts from the nodes fails.
# OpenTofu's test asserts cannot read another run's outputs, so the module does the comparing and
# the test asserts on its mismatches outputs.

terraform {
  required_providers {
    gpucluster = {
      source = "gpucluster/gpucluster"
    }
  }
}

variable "nodes" {
  description = "A scenario module's nodes output (role, pool and id are read)."
  type = list(object({
    role = string
    pool = string
    id   = string
  }))
}

variable "worker_pools" {
  description = "A scenario module's worker_pools output: what each GPU pool reports (name, node_labels, node_taints)."
  type = map(object({
    name        = string
    node_labels = map(string)
    node_taints = list(string)
  }))
}

variable "api_endpoint" {
  description = "The API endpoint the module reports (control_plane.api_endpoint): every GPU worker must join it, or its port under api_server_name."
  type        = string
}

variable "api_server_name" {
  description = "The API server name the module reports (control_plane.api_server_name): every GPU worker must join it on api_endpoint's port. Null: they join api_endpoint."
  type        = string
  default     = null
}

locals {
  # The first node of each pool: every node of a pool gets the same user data.
  first_node = { for pool, ids in { for n in var.nodes : n.pool => n.id... } : pool => ids[0] }
}

data "gpucluster_node_registration" "first" {
  for_each    = local.first_node
  instance_id = each.value
}

output "registered" {
  description = "Per pool name: the kubeadm action, the endpoint, whether the CA is pinned, and the labels and taints its nodes register."
  value = { for pool, r in data.gpucluster_node_registration.first : pool => {
    action       = r.action
    api_endpoint = r.api_endpoint
    pins_ca      = length(r.ca_cert_hashes) > 0 && !r.skips_ca_verification
    labels       = r.labels
    taints       = r.taints
  } }
}

locals {
  registered = { for pool, r in data.gpucluster_node_registration.first : pool => r }
  # Where the workers join: the name on api_endpoint's port (kubeadm's controlPlaneEndpoint
  # behind a gpucluster_control_plane_endpoint), or api_endpoint itself.
  join_endpoint = var.api_server_name == null ? var.api_endpoint : "${var.api_server_name}:${split(":", var.api_endpoint)[1]}"
}

output "reported_but_not_registered" {
  description = "GPU pools whose nodes register other labels or taints than the module reports: empty when they agree."
  value = [for k, p in var.worker_pools : p.name
  if local.registered[p.name].labels != p.node_labels || local.registered[p.name].taints != p.node_taints]
}

output "workers_not_joining_pinned" {
  description = "GPU pools whose nodes do not join the reported endpoint with the CA pinned: empty when all do."
  value = [for k, p in var.worker_pools : p.name
    if local.registered[p.name].action != "join" || local.registered[p.name].api_endpoint != local.join_endpoint ||
  length(local.registered[p.name].ca_cert_hashes) == 0 || local.registered[p.name].skips_ca_verification]
}

output "init_nodes" {
  description = "The pools whose nodes run kubeadm init: exactly one, the first control-plane pool."
  value       = [for pool, r in local.registered : pool if r.action == "init"]
}
