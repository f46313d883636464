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
  description = "Each GPU worker pool: id, instance type, GPU count, node labels and taints, price per hour, and for an autoscaling pool its scaling group id and bounds."
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

output "instance_types" {
  description = "Instance type of each worker pool."
  value       = module.scenario.cluster.instance_types
}

output "instance_type_reasons" {
  description = "Why the catalog chose each worker pool's instance type."
  value       = module.scenario.cluster.instance_type_reasons
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
  description = "Price of every node pool together per hour (storage is not priced)."
  value       = module.scenario.cluster.estimated_hourly_price
}

output "join_token" {
  description = "The kubeadm join token (sensitive)."
  value       = module.scenario.join_token
  sensitive   = true
}
