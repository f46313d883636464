# The module's defaults against the emulator, with two workers: apply, check, destroy.

variables {
  # These runs apply against the emulator alone: no Kubernetes API answers, so no control-plane
  # node could run the acceptance gate's checks (the cluster tests, internal/clustertest, run the
  # gate against the offline cluster).
  acceptance = { enabled = false }
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names
  # them. registered_as_reported reads each node's registration from the bundle its stub names.
  control_plane    = { ram_role_name = "es-test-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "es-test-worker" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed         = "unused-while-ca-seed-version-is-null"
  name            = "es-test"
  join_token_salt = "module-test"
  cold_storage = {
    bucket_name   = "es-test-cold-0001"
    force_destroy = true
  }
}

run "defaults" {
  # What the module reports is what the GPU workers' kubelets register: the pool's own bootstrap
  # renders its node_labels/node_taints into kubeadm (TestAccNodePool_bootstrap reads them back).
  assert {
    condition     = output.worker_pools["gpu"].node_labels["nvidia.com/gpu.present"] == "true" && output.worker_pools["gpu"].node_labels["gpucluster.io/scenario"] == "engineering_simulation" && jsonencode(output.worker_pools["gpu"].node_taints) == jsonencode(["nvidia.com/gpu:NoSchedule"])
    error_message = "GPU workers register nvidia.com/gpu.present=true and the taint nvidia.com/gpu:NoSchedule: ${jsonencode(output.worker_pools)}"
  }
  assert {
    condition     = startswith(output.instance_types["gpu"], "ecs.gn6e-")
    error_message = "V100S for FP64 and ECC should be served by gn6e, got ${output.instance_types["gpu"]}"
  }
  assert {
    condition     = output.gpu_count == 16
    error_message = "two 8-GPU nodes make 16 GPUs, got ${output.gpu_count}"
  }
  assert {
    condition     = length([for n in output.nodes : n if n.status == "Running"]) == 3
    error_message = "expected a control plane and two workers running: ${jsonencode(output.nodes)}"
  }
  assert {
    condition     = keys(output.storage_ids) == ["cold", "warm"] && output.alluxio_properties == null
    error_message = "expected warm and cold tiers and no cache by default: ${jsonencode(output.storage_ids)}"
  }
  assert {
    condition     = output.alert_rules.thresholds.gpu_util_below_percent == 70
    error_message = "simulation alerts fire below 70% GPU utilisation"
  }
  assert {
    condition     = length(output.network.deployment_set_ids) == 1
    error_message = "spread placement needs one placement group for three nodes"
  }
  # MPI: 2 nodes x 8 GPUs, and no eRDMA on this scenario's network, so OpenMPI uses TCP.
  assert {
    condition     = output.mpi.ranks == 16 && strcontains(output.mpi.cfd_yaml, "-np 16 -H cfd-openfoam-worker-0") && strcontains(output.mpi.cfd_yaml, "--mca btl tcp,vader,self") && !strcontains(output.mpi.cfd_yaml, "pml ucx")
    error_message = "the OpenFOAM MPIJob must run 16 ranks over TCP: ${output.mpi.cfd_yaml}"
  }
  assert {
    condition     = strcontains(output.mpi.cfd_yaml, "gpucluster.io/pool") && strcontains(output.mpi.cfd_yaml, "- es-test-gpu") && strcontains(output.mpi.operator_yaml, "kind: Deployment")
    error_message = "the MPIJob must require the pool's nodes: ${output.mpi.cfd_yaml}"
  }
}

# What the module reports is what the nodes register: the first node of every pool, read back
# from the user data ECS holds (gpucluster_node_registration in testing/node-registrations).
run "registered_as_reported" {
  module {
    source = "../../testing/node-registrations"
  }
  variables {
    nodes           = run.defaults.nodes
    worker_pools    = run.defaults.worker_pools
    api_endpoint    = run.defaults.control_plane.api_endpoint
    api_server_name = run.defaults.control_plane.api_server_name
  }
  assert {
    condition     = length(output.reported_but_not_registered) == 0
    error_message = "these GPU pools report other node_labels/node_taints than their nodes register: ${jsonencode(output.reported_but_not_registered)}; registered: ${jsonencode(output.registered)}"
  }
  assert {
    condition     = length(output.workers_not_joining_pinned) == 0
    error_message = "these GPU pools do not join the control plane's endpoint pinning the CA: ${jsonencode(output.workers_not_joining_pinned)}"
  }
  assert {
    condition     = length(output.init_nodes) == 1
    error_message = "exactly one pool's nodes must run kubeadm init, got ${jsonencode(output.init_nodes)}"
  }
}

run "pinned_type" {
  command = plan

  variables {
    worker_pools = {
      t4 = { size = 1, instance_type = "ecs.gn6i-c4g1.xlarge" }
    }
  }

  assert {
    condition     = output.instance_types["t4"] == "ecs.gn6i-c4g1.xlarge"
    error_message = "a pinned instance type must be kept"
  }
}

# A fixed pool and an autoscaling spot pool: the autoscaling pool's group is an output, the
# Cluster Autoscaler names it, and MPI team quotas may use the GPUs it can grow to.
run "autoscaling_spot_pool" {
  variables {
    name = "es-as"
    cold_storage = {
      bucket_name   = "es-as-cold-0001"
      force_destroy = true
    }
    worker_pools = {
      gpu = { size = 1 }
      burst = {
        autoscaling = { min_size = 0, max_size = 8, on_demand_base = 1 }
        spot        = { strategy = "SpotAsPriceGo" }
      }
    }
    teams         = { cfd = { gpus = 64, pool = "burst" } }
    control_plane = { ram_role_name = "es-as-control-plane" }
  }

  assert {
    condition     = keys(output.scaling_group_ids) == ["burst"] && startswith(output.scaling_group_ids["burst"], "asg-")
    error_message = "expected the burst pool's scaling group: ${jsonencode(output.scaling_group_ids)}"
  }
  assert {
    condition     = strcontains(output.cluster_autoscaler_yaml, "--nodes=0:8:${output.scaling_group_ids["burst"]}") && !strcontains(output.cluster_autoscaler_yaml, output.worker_pools["gpu"].id)
    error_message = "the Cluster Autoscaler must size the burst pool, and only it: ${output.cluster_autoscaler_yaml}"
  }
  assert {
    condition     = output.worker_pools["burst"].autoscaling.on_demand_base == 1 && length([for n in output.nodes : n if n.role == "gpu_worker"]) == 1
    error_message = "the burst pool starts at min_size 0 with its on-demand base: ${jsonencode(output.worker_pools["burst"])}"
  }
}
