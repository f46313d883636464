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
    hourly_prices      = module.storage.hourly_prices
  }
}

output "price" {
  description = "Price per hour, CNY: pools (every node pool now), pools_at_max_size (autoscaling pools at max_size; null while one has no node to price), storage (the priced tiers), unpriced_storage (tiers without a sourced price, left out), total (pools + storage) and total_at_max_size (pools_at_max_size + storage)."
  value = {
    pools             = module.cluster.estimated_hourly_price
    pools_at_max_size = module.cluster.estimated_hourly_price_at_max_size
    storage           = module.storage.estimated_hourly_price
    unpriced_storage  = module.storage.unpriced
    total             = module.cluster.estimated_hourly_price + module.storage.estimated_hourly_price
    total_at_max_size = module.cluster.estimated_hourly_price_at_max_size == null ? null : module.cluster.estimated_hourly_price_at_max_size + module.storage.estimated_hourly_price
  }
}

output "cluster" {
  description = "Every output of cluster-core but the join token: control plane, worker pools, instance types and the reasons for them, nodes, GPU count, findings, price, NCCL environment, manifests, alert rules, Alertmanager and Grafana files."
  value       = { for k, v in module.cluster : k => v if k != "join_token" }
}

output "join_token" {
  description = "The kubeadm join token (sensitive); null with ca_seed, whose token is in no state."
  value       = module.cluster.join_token
  sensitive   = true
}
