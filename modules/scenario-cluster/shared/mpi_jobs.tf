# Multi-node MPI for the simulation scenarios, written once and linked into molecular-dynamics and
# engineering-simulation: the MPI Operator, Kueue team queues with gang admission, MPIJob
# templates (LAMMPS, OpenFOAM, Horovod) and the scaling-efficiency validation, rendered by
# gpucluster_kubernetes_manifests for the module's worker pools. With apply_kueue the cluster
# applies Kueue and the teams' queues itself (cluster-core's kueue). See the guide Running MPI jobs.

terraform {
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = ">= 0.1.0"
    }
  }
}

variable "teams" {
  description = "Research teams sharing the cluster through Kueue, such as { chem = { gpus = 32 }, cfd = { gpus = 16 } }: each gets a namespace (namespace, default its name), a LocalQueue and a ClusterQueue guaranteeing gpus on one worker pool (pool: a worker_pools key, default the first), and borrows GPUs other teams leave idle. The quotas on a pool may add up to at most its size x GPUs per node. Empty: one team \"default\" with every GPU, in gpu-workloads."
  type = map(object({
    gpus      = number
    namespace = optional(string)
    pool      = optional(string)
  }))
  default  = {}
  nullable = false

  validation {
    condition     = alltrue([for t in var.teams : t.gpus >= 0 && floor(t.gpus) == t.gpus])
    error_message = "teams: each gpus must be a whole number of at least 0, such as { chem = { gpus = 16 } }."
  }
  validation {
    condition     = alltrue([for t in var.teams : t.pool == null || contains(keys(var.worker_pools), coalesce(t.pool, "-"))])
    error_message = "teams: each pool must be a key of worker_pools."
  }
}

variable "mpi_min_parallel_efficiency_percent" {
  description = "Fail the scaling-efficiency validation (LAMMPS on one node vs every node of the job pool) below this parallel efficiency. 0: report only, against the scenario's 90% target."
  type        = number
  default     = 0
  nullable    = false

  validation {
    condition     = var.mpi_min_parallel_efficiency_percent >= 0 && var.mpi_min_parallel_efficiency_percent <= 100
    error_message = "mpi_min_parallel_efficiency_percent must be between 0 and 100, such as 90."
  }
}

variable "apply_kueue" {
  description = "Apply Kueue (v0.17.0) with the cluster's add-ons: its release manifest, then mpi.queues_yaml's configuration and the teams' queues, so the cluster comes up with gang admission and no kubectl step. Null (the default): on exactly when bootstrap_bundle.enabled, which it needs (the release is 627 KB of YAML, far over user data). Kueue's webhooks refuse every Job while its manager is not running. false: apply Kueue's release manifest and then mpi.queues_yaml yourself."
  type        = bool
  default     = null

  validation {
    condition     = var.apply_kueue != true || var.bootstrap_bundle.enabled
    error_message = "apply_kueue = true needs bootstrap_bundle.enabled = true: Kueue's release manifest (627 KB of YAML) does not fit in the 32 KB of user data ECS accepts. Turn bundles on (and name the two RAM roles), or leave apply_kueue unset (or false) and apply Kueue and mpi.queues_yaml yourself."
  }
}

locals {
  # The teams by worker_pools key: cluster-core names the pools and renders the queues itself.
  # Unset, Kueue comes with the add-ons whenever they travel in bundles.
  kueue = coalesce(var.apply_kueue, var.bootstrap_bundle.enabled) ? { teams = var.teams } : null
  # The pools by the name their nodes carry in the gpucluster.io/pool label, sized from the inputs
  # (cluster-core's mpi_pools), so team quotas that do not fit fail the plan.
  mpi_pools = module.scenario.cluster.mpi_pools
}

data "gpucluster_kubernetes_manifests" "mpi" {
  scenario      = local.scenario
  node_count    = sum([for p in local.mpi_pools : p.node_count])
  gpus_per_node = max([for p in local.mpi_pools : p.gpus_per_node]...)
  erdma         = local.network.erdma
  nccl_env      = length(var.nccl_env) == 0 ? null : var.nccl_env
  max_runtime   = var.idle_reclaim_after
  # The MPI images from the same registry as the rest of the cluster, as resolved there.
  image_registry = module.scenario.cluster.image_registry

  mpi = {
    pools = local.mpi_pools
    teams = length(var.teams) == 0 ? null : { for k, t in var.teams : k => {
      gpus      = t.gpus
      namespace = t.namespace
      pool      = t.pool == null ? null : module.scenario.cluster.worker_pools[t.pool].name
    } }
    min_parallel_efficiency_percent = var.mpi_min_parallel_efficiency_percent
  }
}

output "mpi" {
  description = "MPI on the cluster, in apply order: operator_yaml (the MPI Operator, after its CRD), queues_yaml (Kueue's configuration, after Kueue's release manifest; with apply_kueue the cluster applies both itself), then the MPIJob templates molecular_dynamics_yaml, cfd_yaml and horovod_yaml and the validation validation_scaling_yaml, which run on the first pool with ranks = workers x slots_per_worker; teams are the teams with their defaults (gpus, namespace, pool)."
  value = {
    operator_yaml           = data.gpucluster_kubernetes_manifests.mpi.mpi.operator_yaml
    queues_yaml             = data.gpucluster_kubernetes_manifests.mpi.mpi.queues_yaml
    molecular_dynamics_yaml = data.gpucluster_kubernetes_manifests.mpi.mpi.molecular_dynamics_yaml
    cfd_yaml                = data.gpucluster_kubernetes_manifests.mpi.mpi.cfd_yaml
    horovod_yaml            = data.gpucluster_kubernetes_manifests.mpi.mpi.horovod_yaml
    validation_scaling_yaml = data.gpucluster_kubernetes_manifests.mpi.mpi.validation_scaling_yaml
    ranks                   = data.gpucluster_kubernetes_manifests.mpi.mpi.ranks
    workers                 = data.gpucluster_kubernetes_manifests.mpi.mpi.workers
    slots_per_worker        = data.gpucluster_kubernetes_manifests.mpi.mpi.slots_per_worker
    teams                   = data.gpucluster_kubernetes_manifests.mpi.mpi.teams
  }
}
