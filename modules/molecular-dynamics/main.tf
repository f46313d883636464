# A GPU cluster for molecular dynamics, end to end: an eRDMA network in low-latency placement groups
# for MPI, a hot tier with node-local flash and a warm tier, a control plane, GPU worker pools that
# bootstrap themselves into Kubernetes, and the scenario's manifests and alert rules. The wiring is
# ../scenario-cluster; this module holds the scenario's defaults (variables.tf).

module "scenario" {
  source = "../scenario-cluster"

  scenario   = "molecular_dynamics"
  zone_count = 1

  name               = var.name
  cidr_block         = var.cidr_block
  zone_ids           = var.zone_ids
  admin_cidrs        = var.admin_cidrs
  network            = var.network
  gpu_model          = var.gpu_model
  gpus_per_node      = var.gpus_per_node
  worker_pools       = var.worker_pools
  control_plane      = var.control_plane
  hot_storage        = var.hot_storage
  warm_storage       = var.warm_storage
  idle_reclaim_after = var.idle_reclaim_after
  monitoring         = var.monitoring
  nccl_env           = var.nccl_env
  hpa                = var.hpa
  join_token         = var.join_token
  join_token_salt    = var.join_token_salt
  ca_cert_hash       = var.ca_cert_hash
  tags               = var.tags
}

# Before the shared module, these lived in this module itself: existing states move without
# replacing anything.
moved {
  from = gpucluster_rdma_network.this
  to   = module.scenario.gpucluster_rdma_network.this
}

moved {
  from = module.storage
  to   = module.scenario.module.storage
}

moved {
  from = module.cluster
  to   = module.scenario.module.cluster
}
