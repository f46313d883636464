output "network" {
  description = "The network: id (its security group), VPC, vSwitches per zone, placement groups, and the bandwidth plan."
  value = {
    id                 = gpucluster_rdma_network.this.id
    vpc_id             = gpucluster_rdma_network.this.vpc_id
    vswitch_ids        = gpucluster_rdma_network.this.vswitch_ids
    deployment_set_ids = gpucluster_rdma_network.this.deployment_set_ids
    bandwidth_plan     = gpucluster_rdma_network.this.bandwidth_plan
  }
}

output "storage_ids" {
  description = "Id of each storage tier: warm file system id, cold bucket name."
  value       = module.storage.ids
}

output "control_plane" {
  description = "The control-plane pool and the API endpoint the workers join."
  value       = module.cluster.control_plane
}

output "worker_pools" {
  description = "Each GPU worker pool: id, instance type, GPU count, node labels and taints, price per hour."
  value       = module.cluster.worker_pools
}

output "instance_types" {
  description = "Instance type of each worker pool."
  value       = module.cluster.instance_types
}

output "instance_type_reasons" {
  description = "Why the catalog chose each worker pool's instance type."
  value       = module.cluster.instance_type_reasons
}

output "nodes" {
  description = "Every node: role, pool, instance id, zone, private IP, status, instance type."
  value       = module.cluster.nodes
}

output "gpu_count" {
  description = "GPUs in the cluster."
  value       = module.cluster.gpu_count
}

output "mount_commands" {
  description = "Shell command that mounts the warm tier at /mnt/<name>-warm (the nodes mount it at boot)."
  value       = module.storage.mount_commands
}

output "alluxio_properties" {
  description = "alluxio-site.properties for the cache in front of the cold bucket; null without cold_storage.cache."
  value       = module.storage.alluxio_properties
}

output "storage_sizing" {
  description = "Per tier: backend, provisioned capacity, expected throughput and IOPS (null where the vendor publishes no formula), sizing notes."
  value       = { for k, v in module.storage.expected : k => merge(v, { backend = module.storage.backends[k] }) }
}

output "nccl_env" {
  description = "NCCL environment of jobs on this cluster."
  value       = module.cluster.nccl_env
}

output "manifests_yaml" {
  description = "Kubernetes manifests (device plugin, dcgm-exporter, job template, idle reaper, nccl-tests and HPCG validation jobs) as one YAML stream."
  value       = module.cluster.manifests_yaml
}

output "manifests" {
  description = "The same manifests one object at a time."
  value       = module.cluster.manifests
}

output "alert_rules_yaml" {
  description = "Prometheus rule file for the scenario."
  value       = module.cluster.alert_rules_yaml
}

output "alert_rules" {
  description = "Alert names and thresholds."
  value       = module.cluster.alert_rules
}

output "alertmanager_yaml" {
  description = "Alertmanager routing example."
  value       = module.cluster.alertmanager_yaml
}

output "grafana_dashboard" {
  description = "Grafana dashboard JSON."
  value       = module.cluster.grafana_dashboard
}

output "findings" {
  description = "The catalog's findings on every pool against the scenario."
  value       = module.cluster.findings
}

output "estimated_hourly_price" {
  description = "Price of every node pool together per hour (storage is not priced)."
  value       = module.cluster.estimated_hourly_price
}

output "join_token" {
  description = "The kubeadm join token (sensitive)."
  value       = module.cluster.join_token
  sensitive   = true
}
