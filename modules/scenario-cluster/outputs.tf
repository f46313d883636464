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

output "storage" {
  description = "The storage tiers: ids, mount commands, the Alluxio properties of the cold tier's cache (null without one), and per tier the backend, capacity, expected throughput and IOPS (null where the vendor publishes no formula) and sizing notes."
  value = {
    ids                = module.storage.ids
    mount_commands     = module.storage.mount_commands
    alluxio_properties = module.storage.alluxio_properties
    sizing             = { for k, v in module.storage.expected : k => merge(v, { backend = module.storage.backends[k] }) }
  }
}

output "cluster" {
  description = "Every output of cluster-core but the join token: control plane, worker pools, instance types and the reasons for them, nodes, GPU count, findings, price, NCCL environment, manifests, alert rules, Alertmanager and Grafana files."
  value       = { for k, v in module.cluster : k => v if k != "join_token" }
}

output "join_token" {
  description = "The kubeadm join token (sensitive)."
  value       = module.cluster.join_token
  sensitive   = true
}
