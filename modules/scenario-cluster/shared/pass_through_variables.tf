# Inputs the scenario modules take untyped, with the scenario's default, and pass to
# scenario-cluster, which types and checks them: written once here and linked into ai-training,
# molecular-dynamics and engineering-simulation (see common_variables.tf).

variable "worker_pools" {
  description = "GPU worker pools keyed by a short name, each an object of size or autoscaling (exactly one), min_size, gpu_model, gpus_per_node, instance_type, instance_type_fallback, zone_ids, image_id, system_disk, max_unavailable, auto_release_after, labels, taints, tags and spot (modules/scenario-cluster checks the types). autoscaling = { min_size, max_size, on_demand_base, on_demand_percentage, fallback_to_on_demand, max_hourly_price } makes an Auto Scaling group the module's Cluster Autoscaler sizes; spot = { strategy (SpotAsPriceGo), max_hourly_price } makes spot nodes. Unset gpu_model and gpus_per_node come from the module's; set instance_type instead to pin a type."
  type        = any
  default = {
    gpu = { size = 2 }
  }
  nullable = false
}

variable "control_plane" {
  description = "Kubernetes control plane, an object of enabled, instance_type (ecs.g7.2xlarge), size (1; 1, 3 or 5), image_id, pod_subnet (10.244.0.0/16), api_endpoint, api_server_name (an external control plane's, behind a gpucluster_control_plane_endpoint) and ram_role_name (the nodes' instance RAM role, which the Cluster Autoscaler of autoscaling worker pools authenticates with): a CPU pool running kubeadm init behind an internal load balancer whose address the workers join, or enabled = false with api_endpoint to join an existing API server."
  type        = any
  default     = {}
  nullable    = false
}

variable "hpa" {
  description = "Autoscale an inference Deployment on GPU utilisation (prometheus-adapter), an object of deployment, min_replicas, max_replicas and target_gpu_util_percent; null: no HPA."
  type        = any
  default     = null
}

variable "monitoring" {
  description = "Alert rules: network bursts alert at 80% of design_bandwidth_gbps, on network_interface; the GPU utilisation and memory thresholds are the scenario's (see Defaults in the module's README). An object of design_bandwidth_gbps (100) and network_interface (eth0)."
  type        = any
  default     = {}
  nullable    = false
}

variable "max_hourly_price" {
  description = "Budget, CNY per hour, for the whole cluster with every autoscaling pool at its max_size plus the storage tiers (see the estimated_hourly_price output). Storage above it is refused at plan; the pools are priced at apply (ECS DescribePrice), so a cluster above it fails the apply with the estimate. An autoscaling pool with no node yet cannot be priced by the module: its own autoscaling.max_hourly_price bounds it. Null: no budget."
  type        = number
  default     = null

  validation {
    condition     = var.max_hourly_price == null || try(var.max_hourly_price > 0, false)
    error_message = "max_hourly_price must be a positive number of CNY per hour (such as 500), or null for no budget."
  }
}
