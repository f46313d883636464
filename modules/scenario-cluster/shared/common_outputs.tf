# Outputs of every scenario module, written once and linked into ai-training, molecular-dynamics
# and engineering-simulation (see common_variables.tf). A scenario with a cold tier adds
# alluxio_properties in its own outputs.tf.

output "network" {
  description = "The network: id (its security group), VPC, vSwitches per zone, placement groups, and the bandwidth plan."
  value       = module.scenario.network
}

output "storage_ids" {
  description = "Id of each storage tier the scenario has: a file system tier's file system id, the cold tier's bucket name."
  value       = module.scenario.storage.ids
}

output "control_plane" {
  description = "The control-plane pool, its load balancer (load_balancer_id, address) and the API endpoint the workers join."
  value       = module.scenario.cluster.control_plane
}

output "worker_pools" {
  description = "Each GPU worker pool: id, instance type, GPU count, node labels and taints, price per hour, for an autoscaling pool its scaling group id and bounds, and for a gated pool the acceptance gate's results (acceptance_results)."
  value       = module.scenario.cluster.worker_pools
}

output "scaling_group_ids" {
  description = "The Auto Scaling group id of each autoscaling worker pool: the Cluster Autoscaler's node groups (--nodes=<min>:<max>:<id>)."
  value       = module.scenario.cluster.scaling_group_ids
}

output "cluster_autoscaler_yaml" {
  description = "The Cluster Autoscaler the first control-plane node applies for the autoscaling pools (null without any); it uses the control-plane nodes' RAM role, no AccessKey."
  value       = module.scenario.cluster.cluster_autoscaler_yaml
}

output "addon_files" {
  description = "The add-on files the first control-plane node applies, in apply (name) order; with bundles the simulation modules add 60-mpi-operator.yaml and, unless apply_kueue = false, 65-kueue.yaml."
  value       = module.scenario.cluster.addon_files
}

output "instance_types" {
  description = "Instance type of each worker pool."
  value       = module.scenario.cluster.instance_types
}

output "instance_type_reasons" {
  description = "Why the catalog chose each worker pool's instance type."
  value       = module.scenario.cluster.instance_type_reasons
}

output "control_plane_image" {
  description = "The image the control-plane nodes boot from (node_image.bake): id, name, content_digest, builder_instance_type; only id when control_plane.image_id is set."
  value       = module.scenario.cluster.control_plane_image
}

output "node_images" {
  description = "The GPU node images the worker pools boot from, by pool key (node_image.bake): id, name, content_digest, builder_instance_type, nvswitch."
  value       = module.scenario.cluster.node_images
}

output "nodes" {
  description = "Every node: role, pool, instance id, zone, private IP, status, instance type."
  value       = module.scenario.cluster.nodes
}

output "gpu_count" {
  description = "GPUs in the cluster."
  value       = module.scenario.cluster.gpu_count
}

output "mount_commands" {
  description = "Shell commands that mount each file system tier the scenario has (hot, warm) at /mnt/<name>-<tier> (the nodes mount them at boot)."
  value       = module.scenario.storage.mount_commands
}

output "storage_sizing" {
  description = "Per tier: backend, provisioned capacity, expected throughput and IOPS (null where the vendor publishes no formula), sizing notes."
  value       = module.scenario.storage.sizing
}

output "nccl_env" {
  description = "NCCL environment of jobs on this cluster."
  value       = module.scenario.cluster.nccl_env
}

output "manifests_yaml" {
  description = "Kubernetes manifests (device plugin, dcgm-exporter, the scenario's job template, idle reaper, validation jobs: nccl-tests, plus HPCG in the simulation scenarios) as one YAML stream."
  value       = module.scenario.cluster.manifests_yaml
}

output "images" {
  description = "Every image the cluster runs, for a registry sync: name, upstream, tag, digest, digest_source and reference (the name the cluster pulls, in image_registry)."
  value       = module.scenario.cluster.images
}

output "manifests" {
  description = "The same manifests one object at a time."
  value       = module.scenario.cluster.manifests
}

output "alert_rules_yaml" {
  description = "Prometheus rule file for the scenario."
  value       = module.scenario.cluster.alert_rules_yaml
}

output "alert_rules" {
  description = "Alert names and thresholds."
  value       = module.scenario.cluster.alert_rules
}

output "alertmanager_yaml" {
  description = "Alertmanager routing example."
  value       = module.scenario.cluster.alertmanager_yaml
}

output "grafana_dashboard" {
  description = "Grafana dashboard JSON."
  value       = module.scenario.cluster.grafana_dashboard
}

output "findings" {
  description = "The catalog's findings on every pool against the scenario."
  value       = module.scenario.cluster.findings
}

output "estimated_hourly_price" {
  description = "Price per hour, CNY, of every node pool together (ECS DescribePrice) plus the storage tiers (list price per GiB-month; tiers on a backend without a sourced price are left out and named in price_breakdown.unpriced_storage)."
  value       = module.scenario.price.total

  # max_hourly_price, checked twice: the storage's price is known at plan (from capacity_tib), so a
  # budget that storage alone exceeds is refused before anything is created; the pools' prices come
  # from DescribePrice at apply, so the whole cluster at max_size is checked then.
  precondition {
    condition     = var.max_hourly_price == null || module.scenario.price.storage <= coalesce(var.max_hourly_price, 0)
    error_message = "max_hourly_price = ${coalesce(var.max_hourly_price, 0)} is below the storage tiers' own price, ${format("%.2f", module.scenario.price.storage)} CNY/hour (${jsonencode(module.scenario.storage.hourly_prices)}), before any node pool: raise max_hourly_price, or lower capacity_tib of the tiers."
  }
  precondition {
    condition     = var.max_hourly_price == null || module.scenario.price.total_at_max_size == null || try(module.scenario.price.total_at_max_size <= var.max_hourly_price, true)
    error_message = "max_hourly_price = ${coalesce(var.max_hourly_price, 0)}, but the cluster with every autoscaling pool at max_size would cost ${format("%.2f", coalesce(module.scenario.price.total_at_max_size, 0))} CNY/hour (pools ${format("%.2f", coalesce(module.scenario.price.pools_at_max_size, 0))} + storage ${format("%.2f", module.scenario.price.storage)}): raise max_hourly_price, or lower the pools' size or autoscaling.max_size, or the tiers' capacity_tib."
  }
}

output "price_breakdown" {
  description = "Price per hour, CNY: pools now, pools_at_max_size (autoscaling pools at max_size; null while one has no node to price), storage, unpriced_storage (tiers left out: no sourced price), total and total_at_max_size."
  value       = module.scenario.price
}

output "join_token" {
  description = "The kubeadm join token (sensitive); null with ca_seed, whose token is in no state."
  value       = module.scenario.join_token
  sensitive   = true
}
