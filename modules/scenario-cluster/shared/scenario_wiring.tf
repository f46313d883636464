# The call of ../scenario-cluster that every scenario module makes, written once and linked into
# ai-training, molecular-dynamics and engineering-simulation (see common_variables.tf). What
# differs between scenarios comes from the locals of each module's main.tf: local.scenario,
# local.zone_count and local.storage (its hot, warm and cold inputs; null for a tier it lacks).

module "scenario" {
  source = "../scenario-cluster"

  scenario   = local.scenario
  zone_count = local.zone_count

  name               = var.name
  cidr_block         = var.cidr_block
  zone_ids           = var.zone_ids
  admin_cidrs        = var.admin_cidrs
  network            = var.network
  gpu_model          = var.gpu_model
  gpus_per_node      = var.gpus_per_node
  worker_pools       = var.worker_pools
  control_plane      = var.control_plane
  hot_storage        = local.storage.hot
  warm_storage       = local.storage.warm
  cold_storage       = local.storage.cold
  idle_reclaim_after = var.idle_reclaim_after
  monitoring         = var.monitoring
  nccl_env           = var.nccl_env
  hpa                = var.hpa
  join_token         = var.join_token
  join_token_salt    = var.join_token_salt
  ca_cert_hash       = var.ca_cert_hash
  tags               = var.tags
}

# Before the shared module, these lived in each scenario module itself: existing states move
# without replacing anything.
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
