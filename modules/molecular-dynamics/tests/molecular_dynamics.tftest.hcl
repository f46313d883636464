# The module's defaults against the emulator, with two workers: apply, check, destroy.

variables {
  # These runs apply against the emulator alone: no Kubernetes API answers, so no control-plane
  # node could run the acceptance gate's checks (the cluster tests, internal/clustertest, run the
  # gate against the offline cluster).
  acceptance = { enabled = false }
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names
  # them. registered_as_reported reads each node's registration from the bundle its stub names.
  control_plane    = { ram_role_name = "md-test-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "md-test-worker" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed         = "unused-while-ca-seed-version-is-null"
  name            = "md-test"
  join_token_salt = "module-test"
}

# Before anything exists: a budget the storage alone exceeds (the hot tier is 99.56 CNY/hour) is
# refused at plan, although the pools, priced by DescribePrice at apply, are not known yet.
run "refuses_budget_below_storage" {
  command = plan

  variables {
    max_hourly_price = 50
  }

  expect_failures = [output.estimated_hourly_price]
}

run "defaults" {
  # What the module reports is what the GPU workers' kubelets register: the pool's own bootstrap
  # renders its node_labels/node_taints into kubeadm (TestAccNodePool_bootstrap reads them back).
  assert {
    condition     = output.worker_pools["gpu"].node_labels["nvidia.com/gpu.present"] == "true" && output.worker_pools["gpu"].node_labels["gpucluster.io/scenario"] == "molecular_dynamics" && jsonencode(output.worker_pools["gpu"].node_taints) == jsonencode(["nvidia.com/gpu:NoSchedule"])
    error_message = "GPU workers register nvidia.com/gpu.present=true and the taint nvidia.com/gpu:NoSchedule: ${jsonencode(output.worker_pools)}"
  }
  assert {
    condition     = output.instance_types["gpu"] == "ecs.ebmgn7ex.32xlarge"
    error_message = "FP64 and >= 1 TB/s over eRDMA should give ebmgn7ex, got ${output.instance_types["gpu"]}"
  }
  assert {
    condition     = length([for n in output.nodes : n if n.role == "gpu_worker" && n.status == "Running"]) == 2
    error_message = "expected two running GPU workers: ${jsonencode(output.nodes)}"
  }
  assert {
    condition     = keys(output.storage_ids) == ["hot", "warm"] && length(output.mount_commands) == 2
    error_message = "expected hot and warm tiers with mount commands: ${jsonencode(output.storage_ids)}"
  }
  assert {
    condition     = output.alert_rules.thresholds.gpu_util_below_percent == 70
    error_message = "simulation alerts fire below 70% GPU utilisation"
  }
  assert {
    condition     = length([for f in output.findings : f if f.severity == "error"]) == 0
    error_message = "findings must hold no errors"
  }
  assert {
    condition     = output.estimated_hourly_price > 0
    error_message = "the price must be known"
  }
  # The hot tier (CPFS advance_200, 50 TiB: 51,200 GiB x 1.4 CNY / 720 h) is priced and in the
  # total; the warm tier's NAS class has no sourced price and is named as left out.
  assert {
    condition     = abs(output.price_breakdown.storage - 51200 * 1.4 / 720) < 0.001 && abs(output.estimated_hourly_price - (output.price_breakdown.pools + output.price_breakdown.storage)) < 0.001
    error_message = "the total must be the pools plus the hot tier's 99.56 CNY/hour: ${jsonencode(output.price_breakdown)}"
  }
  assert {
    condition     = output.price_breakdown.total_at_max_size == output.estimated_hourly_price
    error_message = "fixed pools are at their max size already: ${jsonencode(output.price_breakdown)}"
  }
  # MPI: without teams, one default team has the pool's 2 x 8 GPUs; the templates run one rank
  # per GPU, over UCX on eRDMA (the scenario's network).
  assert {
    condition     = output.mpi.ranks == 16 && output.mpi.workers == 2 && output.mpi.slots_per_worker == 8
    error_message = "ranks must be 2 nodes x 8 GPUs: ${jsonencode({ for k, v in output.mpi : k => v if !endswith(k, "_yaml") })}"
  }
  assert {
    condition     = output.mpi.teams["default"].gpus == 16 && output.mpi.teams["default"].pool == "md-test-gpu"
    error_message = "the default team must hold every GPU of the pool: ${jsonencode(output.mpi.teams)}"
  }
  assert {
    condition     = strcontains(output.mpi.molecular_dynamics_yaml, "-np 16 -H md-lammps-worker-0.md-lammps.gpu-workloads.svc:8,md-lammps-worker-1.md-lammps.gpu-workloads.svc:8") && strcontains(output.mpi.molecular_dynamics_yaml, "--mca pml ucx")
    error_message = "the LAMMPS MPIJob must run 16 ranks over UCX: ${output.mpi.molecular_dynamics_yaml}"
  }
  assert {
    condition     = strcontains(output.mpi.molecular_dynamics_yaml, "kueue.x-k8s.io/queue-name: default") && strcontains(output.mpi.queues_yaml, "kind: LocalQueue") && strcontains(output.mpi.validation_scaling_yaml, "-v target=90 -v min=0")
    error_message = "jobs must be queued on the team's LocalQueue and the scaling job report against 90%"
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

# Two teams sharing the pool: a ClusterQueue each with its quota, in one cohort.
run "mpi_teams" {
  variables {
    teams                               = { chem = { gpus = 10 }, bio = { gpus = 6, namespace = "biology" } }
    mpi_min_parallel_efficiency_percent = 90
  }

  assert {
    condition     = output.mpi.teams["bio"].namespace == "biology" && output.mpi.teams["chem"].namespace == "chem"
    error_message = "team namespaces: ${jsonencode(output.mpi.teams)}"
  }
  assert {
    condition     = length(regexall("kind: ClusterQueue", output.mpi.queues_yaml)) == 2 && strcontains(output.mpi.queues_yaml, "nominalQuota: \"10\"") && strcontains(output.mpi.queues_yaml, "cohortName: gpucluster-teams")
    error_message = "two ClusterQueues with the teams' quotas: ${output.mpi.queues_yaml}"
  }
  assert {
    condition     = strcontains(output.mpi.horovod_yaml, "queue-name: bio") && strcontains(output.mpi.horovod_yaml, "namespace: biology") && strcontains(output.mpi.validation_scaling_yaml, "-v min=90")
    error_message = "templates go to the first team by name (bio) with the threshold: ${output.mpi.horovod_yaml}"
  }
}

# Kueue in the add-ons by default (bundles are on): the teams go into the cluster by worker_pools
# key, and the first control-plane node applies Kueue's release and their queues after the MPI
# Operator.
run "kueue_addon" {
  command = plan
  variables {
    teams = { chem = { gpus = 10, pool = "gpu" }, bio = { gpus = 6 } }
  }

  assert {
    condition     = output.addon_files[length(output.addon_files) - 1] == "65-kueue.yaml" && contains(output.addon_files, "60-mpi-operator.yaml")
    error_message = "by default the add-ons must end with Kueue after the MPI Operator: ${jsonencode(output.addon_files)}"
  }
  assert {
    condition     = output.mpi.teams["chem"].pool == output.worker_pools["gpu"].name && strcontains(output.mpi.queues_yaml, "name: ${output.worker_pools["gpu"].name}")
    error_message = "the queues must name the pool as its nodes carry it: ${jsonencode(output.mpi.teams)}"
  }
}

# apply_kueue = false keeps Kueue out of the add-ons; the MPI Operator stays.
run "kueue_opt_out" {
  command = plan
  variables {
    apply_kueue = false
  }

  assert {
    condition     = !contains(output.addon_files, "65-kueue.yaml") && contains(output.addon_files, "60-mpi-operator.yaml")
    error_message = "with apply_kueue = false the add-ons must hold the MPI Operator and no Kueue: ${jsonencode(output.addon_files)}"
  }
}

run "matrix_budget_option" {
  command = plan

  variables {
    gpu_model     = "A40"
    gpus_per_node = 8
  }

  assert {
    condition     = output.worker_pools["gpu"].instance_type == "ecs.gn8is-8x.32xlarge"
    error_message = "A40 is served by L20 (gn8is), got ${output.worker_pools["gpu"].instance_type}"
  }
}


# Once the pools exist their prices are known at plan: a budget above the storage but below the
# whole cluster (about 781 CNY/hour in the emulator) is refused at plan too.
run "refuses_cluster_above_budget" {
  command = plan

  variables {
    max_hourly_price = 200
  }

  expect_failures = [output.estimated_hourly_price]
}

run "refuses_non_positive_budget" {
  command = plan

  variables {
    max_hourly_price = 0
  }

  expect_failures = [var.max_hourly_price]
}
