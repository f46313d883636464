# The call of ../scenario-cluster that every scenario module makes, written once and linked into
# ai-training, molecular-dynamics and engineering-simulation (see common_variables.tf). What
# differs between scenarios is local.scenario (each module's main.tf), the scenario's row of
# scenario_defaults.tf, and the storage tiers it has (*_storage_input.tf; null for a tier it lacks).

module "scenario" {
  source = "../scenario-cluster"

  scenario   = local.scenario
  zone_count = local.zone_count

  name               = var.name
  cidr_block         = local.cidr_block
  zone_ids           = var.zone_ids
  admin_cidrs        = var.admin_cidrs
  network            = local.network
  gpu_model          = local.gpu_model
  gpus_per_node      = var.gpus_per_node
  worker_pools       = var.worker_pools
  control_plane      = var.control_plane
  hot_storage        = local.hot_storage
  warm_storage       = local.warm_storage
  cold_storage       = local.cold_storage
  idle_reclaim_after = var.idle_reclaim_after
  validation_jobs    = var.validation_jobs
  gpu_health_agent   = var.gpu_health_agent
  join_timeout       = var.join_timeout
  drain_timeout      = var.drain_timeout
  acceptance         = var.acceptance
  image_registry     = var.image_registry
  package_mirror     = var.package_mirror
  node_image         = var.node_image
  bootstrap_bundle   = var.bootstrap_bundle
  etcd_backup        = var.etcd_backup
  monitoring         = var.monitoring
  nccl_env           = var.nccl_env
  hpa                = var.hpa
  join_token         = var.join_token
  join_token_salt    = var.join_token_salt
  ca_seed            = var.ca_seed
  ca_seed_version    = var.ca_seed_version
  ca_cert_hash       = var.ca_cert_hash
  tags               = var.tags

  # Kueue and the team queues in the add-ons: set by mpi_jobs.tf in the simulation modules, null
  # in the others (their main.tf).
  kueue = local.kueue
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
