# Inputs every scenario module declares alike, written once and linked into ai-training,
# molecular-dynamics and engineering-simulation (a relative symlink in each: OpenTofu and Terraform
# load it as a file of that module). Not a module of its own: the inputs whose defaults or
# descriptions are the scenario's stay in each scenario module's variables.tf.

variable "name" {
  description = "Cluster name: names the network, the pools (<name>-cp, <name>-<pool>) and the storage tiers the scenario has (<name>-hot, <name>-warm, <name>-cold). 3-40 lowercase letters, digits and hyphens."
  type        = string
}

variable "admin_cidrs" {
  description = "IPv4 blocks allowed to reach SSH and the Kubernetes API (6443): your office block or bastion. Empty: nothing from outside the cluster."
  type        = list(string)
  default     = []
}

variable "worker_pools" {
  description = "GPU worker pools keyed by a short name, each an object of size (required), min_size, gpu_model, gpus_per_node, instance_type, instance_type_fallback, zone_ids, image_id, system_disk, max_unavailable, auto_release_after, labels, taints and tags (modules/scenario-cluster checks the types). Unset gpu_model and gpus_per_node come from the module's; set instance_type instead to pin a type."
  type        = any
  default = {
    gpu = { size = 2 }
  }
  nullable = false
}

variable "control_plane" {
  description = "Kubernetes control plane, an object of enabled, instance_type (ecs.g7.2xlarge), size (1), image_id, pod_subnet (10.244.0.0/16) and api_endpoint: a CPU pool running kubeadm init, or enabled = false with api_endpoint to join an existing API server."
  type        = any
  default     = {}
  nullable    = false
}

variable "idle_reclaim_after" {
  description = "How long an opted-in job (label gpucluster.io/reap-after-max-runtime=true) may run before the reaper reclaims it. 72h by default, the scenario's target."
  type        = string
  default     = "72h"
}

variable "nccl_env" {
  description = "NCCL variables that override the network's defaults in workload pods, such as { NCCL_DEBUG = \"INFO\" }."
  type        = map(string)
  default     = {}
}

variable "hpa" {
  description = "Autoscale an inference Deployment on GPU utilisation (prometheus-adapter), an object of deployment, min_replicas, max_replicas and target_gpu_util_percent; null: no HPA."
  type        = any
  default     = null
}

variable "join_token" {
  description = "kubeadm bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}. Null: derived from the network id, the name and join_token_salt."
  type        = string
  default     = null
  sensitive   = true
}

variable "join_token_salt" {
  description = "Secret mixed into the derived join token when join_token is null. Set it (from a secret store) outside test clusters."
  type        = string
  default     = null
  sensitive   = true
}

variable "ca_cert_hash" {
  description = "sha256:<hex> of the cluster CA that workers pin when they join; null: no pinning (a warning says so)."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags on the network, the storage tiers and every node."
  type        = map(string)
  default     = {}
}
