# One scenario's cluster, end to end: the network, the storage tiers the scenario asks for, the
# control plane and GPU worker pools (../cluster-core), and the scenario's manifests and alert
# rules. The scenario modules (ai-training, molecular-dynamics, engineering-simulation) call it
# with their own defaults; all the wiring lives here, once.

locals {
  # var.worker_pools is untyped (cluster-core types it), so an attribute the caller left out is
  # read with try().
  worker_pools = { for k, p in var.worker_pools : k => merge(p, {
    gpu_model     = try(p.instance_type, null) == null ? coalesce(try(p.gpu_model, null), var.gpu_model) : null
    gpus_per_node = try(p.instance_type, null) == null ? coalesce(try(p.gpus_per_node, null), var.gpus_per_node) : null
  }) }

  # Every node of a fixed pool, control plane included, lands in a placement group of at most 20;
  # autoscaling pools do not (scaling groups take no deployment set).
  node_count       = sum(concat([0], [for p in var.worker_pools : p.size if try(p.size, null) != null])) + (var.control_plane.enabled ? var.control_plane.size : 0)
  placement_groups = var.network.placement == "none" ? 0 : coalesce(var.network.placement_groups, max(1, ceil(local.node_count / 20)))

  node_local_disk = var.hot_storage == null ? false : var.hot_storage.node_local_disk
}

data "gpucluster_zones" "region" {}

resource "gpucluster_rdma_network" "this" {
  name             = var.name
  cidr_block       = var.cidr_block
  zone_ids         = coalesce(var.zone_ids, slice(data.gpucluster_zones.region.ids, 0, var.zone_count))
  admin_cidrs      = var.admin_cidrs
  erdma            = var.network.erdma
  placement        = var.network.placement
  placement_groups = local.placement_groups
  hpc_cluster      = var.network.hpc_cluster
  egress           = var.network.egress_mode == null ? null : { mode = var.network.egress_mode }
  tags             = var.tags

  lifecycle {
    # Every node of this module runs the node bootstrap: on a network without a route out, refuse
    # at plan, before anything is created, unless the bootstrap takes everything from inside the
    # VPC (data.gpucluster_node_bootstrap.reach). ../cluster-core checks the same on its pools for
    # its other callers.
    precondition {
      condition     = var.network.egress_mode != "none" || length(data.gpucluster_node_bootstrap.reach.internet_sources) == 0
      error_message = "network.egress_mode = \"none\" gives the cluster's nodes no route to the internet, but their bootstrap (package_mirror = ${var.package_mirror == null ? "the region's default" : "\"${var.package_mirror}\""}, image_registry = ${var.image_registry == null ? "the region's default" : "\"${var.image_registry}\""}) downloads from it: ${join("; ", data.gpucluster_node_bootstrap.reach.internet_sources)}. Leave network.egress_mode unset (\"nat\": a NAT gateway and EIP of the network's own), set it to \"existing\" when a route of your own leads out, or take everything from inside the VPC: package_mirror = \"alibaba_vpc\" and image_registry on a registry's VPC endpoint (registry-vpc.<region>.aliyuncs.com/<namespace>)."
    }
  }
}

# What a GPU worker's bootstrap (the superset of the control plane's) would still download from
# the internet with this module's package_mirror and image_registry: rendered offline, for the
# egress check above. Placeholders for what it joins: they change nothing it downloads.
data "gpucluster_node_bootstrap" "reach" {
  role           = "gpu_worker"
  package_mirror = var.package_mirror
  kubernetes = {
    image_registry = var.image_registry
    api_endpoint   = "127.0.0.1:6443"
    join_token     = "abcdef.0123456789abcdef"
    ca_cert_hash   = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
  }
}

module "storage" {
  source = "../storage-tiers"

  name       = var.name
  network_id = gpucluster_rdma_network.this.id

  hot = var.hot_storage == null ? null : {
    capacity_tib        = var.hot_storage.capacity_tib
    min_throughput_gbps = var.hot_storage.min_throughput_gbps
    min_iops            = local.node_local_disk ? var.hot_storage.min_iops : null
    backend             = var.hot_storage.backend
    tags                = var.tags
  }
  # Spelled out rather than merge()d: a null of merge()'s narrower type would not convert to the
  # tier's object type.
  warm = var.warm_storage == null ? null : {
    capacity_tib        = var.warm_storage.capacity_tib
    min_throughput_gbps = var.warm_storage.min_throughput_gbps
    backend             = var.warm_storage.backend
    tags                = var.tags
  }
  cold = var.cold_storage == null ? null : {
    bucket_name      = var.cold_storage.bucket_name
    capacity_tib     = var.cold_storage.capacity_tib
    force_destroy    = var.cold_storage.force_destroy
    object_lifecycle = var.cold_storage.object_lifecycle
    cache            = var.cold_storage.cache
    tags             = var.tags
  }
}

module "cluster" {
  source = "../cluster-core"

  name          = var.name
  scenario      = var.scenario
  network_id    = gpucluster_rdma_network.this.id
  erdma         = var.network.erdma
  nccl_env      = var.nccl_env
  control_plane = var.control_plane
  worker_pools  = local.worker_pools

  # Known at plan: the network plans its egress mode from its configuration.
  network_egress_mode = gpucluster_rdma_network.this.egress.mode

  # Built here so that whether there is a disk is known at plan time even while its size is not.
  node_local_disk = local.node_local_disk ? {
    category          = "cloud_essd"
    performance_level = "PL3"
    size_gib          = module.storage.hot_data_disk.size_gib
  } : null
  mounts = module.storage.fstab_lines

  join_token         = var.join_token
  join_token_salt    = var.join_token_salt
  ca_seed            = var.ca_seed
  ca_seed_version    = var.ca_seed_version
  ca_cert_hash       = var.ca_cert_hash
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
  # The scenarios whose modules render MPI jobs and team queues (shared/mpi_jobs.tf) get the MPI
  # Operator with its CRD among the add-ons, when they travel in a bundle (they exceed user data).
  mpi_operator = var.bootstrap_bundle.enabled && contains(["molecular_dynamics", "engineering_simulation"], var.scenario)
  kueue        = var.kueue
  monitoring   = var.monitoring
  hpa          = var.hpa
  tags         = var.tags
}
