data "gpucluster_kubernetes_manifests" "training" {
  scenario      = "ai_training"
  node_count    = 4
  gpus_per_node = 8
  erdma         = true
  max_runtime   = "72h"

  # Fail the cross-node all-reduce below 80% of a 100 Gbit/s link (12.5 GB/s).
  min_cross_node_bus_bandwidth_gbs = 10

  # Scale an inference Deployment on its pods' GPU utilisation (served by prometheus-adapter).
  hpa = {
    deployment   = "inference"
    min_replicas = 1
    max_replicas = 4
  }

  # Put the validation jobs in the add-on set too (50-validation.yaml).
  addons_validation = true
}

# Everything the cluster applies to itself after kubeadm init (device plugin, dcgm-exporter, the
# monitoring stack, reaper, validation), one file per map entry. Give the map to the first
# control-plane pool (kubernetes = { ..., addons = data.gpucluster_kubernetes_manifests.training.addons }),
# or write it out and run `kubectl apply --server-side -f addons/`, which applies the files in name order.
resource "local_file" "addons" {
  for_each = data.gpucluster_kubernetes_manifests.training.addons
  filename = "${path.module}/addons/${each.key}"
  content  = each.value
}

# Apply with `kubectl apply -f manifests.yaml`, or one kubernetes_manifest per document.
resource "local_file" "manifests" {
  filename = "${path.module}/manifests.yaml"
  content  = data.gpucluster_kubernetes_manifests.training.yaml
}

# The all-reduce across every node (tests the eRDMA fabric between nodes), to apply on its own
# once the pool is up: `kubectl apply -f all-reduce.yaml`, then read rank 0's report with
# `kubectl logs -n gpu-workloads -l batch.kubernetes.io/job-completion-index=0,app.kubernetes.io/name=nccl-all-reduce-pool`.
resource "local_file" "all_reduce" {
  filename = "${path.module}/all-reduce.yaml"
  content  = data.gpucluster_kubernetes_manifests.training.validation_all_reduce_yaml
}

# Multi-node MPI for a molecular-dynamics pool shared by two teams: the MPI Operator, Kueue team
# queues with gang admission, MPIJob templates and the scaling-efficiency check (guide: Running
# MPI jobs). Team quotas on a pool may add up to at most its nodes x GPUs per node.
data "gpucluster_kubernetes_manifests" "md" {
  scenario      = "molecular_dynamics"
  node_count    = 4
  gpus_per_node = 8
  erdma         = true

  mpi = {
    pools = { md-gpu = { node_count = 4, gpus_per_node = 8 } } # the node pool's name
    teams = { chem = { gpus = 16 }, cfd = { gpus = 16 } }

    min_parallel_efficiency_percent = 90 # fail the scaling check below the scenario's target
  }
}

# Apply in this order: the MPIJob CRD of the operator's release, operator.yaml, Kueue's release
# manifest, queues.yaml (then restart Kueue's manager); then submit a template in its team's namespace.
resource "local_file" "mpi" {
  for_each = {
    "operator.yaml"           = data.gpucluster_kubernetes_manifests.md.mpi.operator_yaml
    "queues.yaml"             = data.gpucluster_kubernetes_manifests.md.mpi.queues_yaml
    "lammps.yaml"             = data.gpucluster_kubernetes_manifests.md.mpi.molecular_dynamics_yaml
    "scaling-efficiency.yaml" = data.gpucluster_kubernetes_manifests.md.mpi.validation_scaling_yaml
  }
  filename = "${path.module}/mpi/${each.key}"
  content  = each.value
}
