# Will a 64-node training cluster and its control plane fit the account, the zones and the
# network? A shortfall stops the plan naming the pool, the need, what is available and the fix.
data "gpucluster_preflight" "stack" {
  pools = [
    {
      name          = "control_plane"
      instance_type = "ecs.g7.2xlarge"
      size          = 3
      network_id    = gpucluster_rdma_network.train.id
    },
    {
      name          = "train"
      instance_type = "ecs.ebmgn7ex.32xlarge"
      size          = 48
      max_size      = 64 # autoscaling: the quotas must hold the pool at its largest
      network_id    = gpucluster_rdma_network.train.id
      zone_ids      = ["cn-wulanchabu-a", "cn-wulanchabu-b"]
    },
  ]
  load_balancers         = 1
  load_balancer_backends = 3
}

output "preflight" {
  description = "What the stack takes of each quota, and the create's API calls at the provider's rate limit."
  value       = data.gpucluster_preflight.stack.summary
}
