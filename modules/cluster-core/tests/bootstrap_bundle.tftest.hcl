# bootstrap_bundle.enabled: one bootstrap bucket, every pool's bootstrap in it under a prefix of
# its own, the control plane's prefixes readable by the control-plane role only.

run "network" {
  variables {
    name = "cluster-core-bundle"
  }
  module {
    source = "./tests/setup"
  }
}

variables {
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed         = "unused-while-ca-seed-version-is-null"
  name            = "cc-bundle"
  scenario        = "ai_training"
  join_token_salt = "test-salt"
  worker_pools = {
    gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 }
  }
}

# Bundles are the default: without a worker role the plan stops at the variable.
run "needs_a_worker_role" {
  command = plan
  variables {
    network_id    = run.network.network_id
    control_plane = { ram_role_name = "cc-bundle-cp" }
  }
  expect_failures = [var.bootstrap_bundle]
}

# The MPI Operator's CRD does not fit in user data: without bundles the plan stops at the variable.
run "mpi_operator_needs_bundles" {
  command = plan
  variables {
    network_id       = run.network.network_id
    bootstrap_bundle = { enabled = false }
    mpi_operator     = true
  }
  expect_failures = [var.mpi_operator]
}

# Kueue's release is 627 KB of YAML: without bundles the plan stops at the variable too.
run "kueue_needs_bundles" {
  command = plan
  variables {
    network_id       = run.network.network_id
    bootstrap_bundle = { enabled = false }
    kueue            = {}
  }
  expect_failures = [var.kueue]
}

# A team's pool is a worker_pools key; a pool name is refused before anything is planned.
run "kueue_team_pool_is_a_key" {
  command = plan
  variables {
    network_id       = run.network.network_id
    control_plane    = { ram_role_name = "cc-bundle-cp" }
    bootstrap_bundle = { enabled = true, worker_ram_role_name = "cc-bundle-worker" }
    kueue            = { teams = { chem = { gpus = 8, pool = "cc-bundle-gpu" } } }
  }
  expect_failures = [var.kueue]
}

run "needs_a_control_plane_role" {
  command = plan
  variables {
    network_id       = run.network.network_id
    bootstrap_bundle = { enabled = true, worker_ram_role_name = "cc-bundle-worker" }
  }
  expect_failures = [var.bootstrap_bundle]
}

run "refuses_one_role_for_both" {
  command = plan
  variables {
    network_id       = run.network.network_id
    control_plane    = { ram_role_name = "cc-bundle-cp" }
    bootstrap_bundle = { enabled = true, worker_ram_role_name = "cc-bundle-cp" }
  }
  expect_failures = [var.bootstrap_bundle]
}

# etcd snapshots go to the bundle's bucket: without bundles, or with a period a node's timer
# cannot take, the plan stops at the variable.
run "etcd_backup_needs_bundles" {
  command = plan
  variables {
    network_id       = run.network.network_id
    bootstrap_bundle = { enabled = false }
    etcd_backup      = { enabled = true }
  }
  expect_failures = [var.etcd_backup]
}

run "etcd_backup_period" {
  command = plan
  variables {
    network_id       = run.network.network_id
    control_plane    = { ram_role_name = "cc-bundle-cp" }
    bootstrap_bundle = { enabled = true, worker_ram_role_name = "cc-bundle-worker" }
    etcd_backup      = { enabled = true, every = "1d" }
  }
  expect_failures = [var.etcd_backup]
}

# gpu_health_agent = false leaves the agent out of bundled add-ons (the add-ons themselves are
# known only after apply; the data source's input is known at plan).
run "gpu_health_agent_off" {
  command = plan
  variables {
    network_id       = run.network.network_id
    control_plane    = { ram_role_name = "cc-bundle-cp" }
    bootstrap_bundle = { enabled = true, worker_ram_role_name = "cc-bundle-worker" }
    gpu_health_agent = false
  }
  assert {
    condition     = data.gpucluster_kubernetes_manifests.cluster.addons_gpu_health_agent == false
    error_message = "gpu_health_agent = false must leave the agent out of the add-ons"
  }
}

run "bundled" {
  variables {
    network_id       = run.network.network_id
    control_plane    = { size = 3, ram_role_name = "cc-bundle-cp" }
    bootstrap_bundle = { enabled = true, worker_ram_role_name = "cc-bundle-worker" }
    mpi_operator     = true
    kueue            = { teams = { chem = { gpus = 8 } } }
    etcd_backup      = { enabled = true, every = "4h" }
  }

  # Kueue after the MPI Operator: its release, then the team's queue on the pool by the name its
  # nodes carry, which the module gives the pool itself (no name comes back in from outside).
  assert {
    condition     = output.addon_files[length(output.addon_files) - 1] == "65-kueue.yaml" && strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["65-kueue.yaml"], "name: kueue-controller-manager") && strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["65-kueue.yaml"], "kind: ClusterQueue")
    error_message = "with kueue the first control-plane pool's add-ons must end with Kueue's release and queues: ${jsonencode(output.addon_files)}"
  }
  assert {
    condition     = strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["65-kueue.yaml"], "gpucluster.io/pool: ${gpucluster_node_pool.worker["gpu"].name}")
    error_message = "the ResourceFlavor must select the worker pool's nodes by its name ${gpucluster_node_pool.worker["gpu"].name}"
  }
  # The queues are kueue.teams' (team chem's LocalQueue), not a default team's.
  assert {
    condition     = strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["65-kueue.yaml"], "clusterQueue: chem\n")
    error_message = "65-kueue.yaml must hold team chem's queues, from kueue.teams"
  }

  # Both control-plane pools store etcd snapshots under the cluster's prefix, which the
  # control-plane role may write and no role reads; the workers store none.
  assert {
    condition = alltrue([for p in [gpucluster_node_pool.control_plane[0], gpucluster_node_pool.control_plane_join[0]] :
    p.bootstrap_bundle.etcd_backup.key_prefix == "etcd-snapshots/cc-bundle" && p.bootstrap_bundle.etcd_backup.every == "4h"]) && gpucluster_node_pool.worker["gpu"].bootstrap_bundle.etcd_backup == null
    error_message = "the control-plane pools must store etcd snapshots under etcd-snapshots/cc-bundle every 4h, the workers none: ${jsonencode(gpucluster_node_pool.control_plane[0].bootstrap_bundle)}"
  }
  assert {
    condition     = contains([for w in gpucluster_bootstrap_bucket.bundles[0].writers : "${w.key} ${w.ram_role_name}"], "etcd-snapshots/cc-bundle/* cc-bundle-cp") && !anytrue([for r in output.bootstrap_bundle.readers : startswith("etcd-snapshots/cc-bundle", r.key_prefix)])
    error_message = "the control-plane role must write under etcd-snapshots/cc-bundle/ and nobody read it: ${jsonencode(gpucluster_bootstrap_bucket.bundles[0].writers)}"
  }
  assert {
    condition     = [for e in gpucluster_bootstrap_bucket.bundles[0].expirations : "${e.key_prefix} ${e.days}"] == ["etcd-snapshots/cc-bundle 30"]
    error_message = "the bucket must expire the snapshots after 30 days, the default retention: ${jsonencode(gpucluster_bootstrap_bucket.bundles[0].expirations)}"
  }

  # The GPU health agent is on by default with bundled add-ons: its DaemonSet on the GPU nodes.
  assert {
    condition     = strcontains(lookup(gpucluster_node_pool.control_plane[0].kubernetes.addons, "25-gpu-health-agent.yaml", ""), "name: gpu-health-agent")
    error_message = "with bundles the add-ons must hold the GPU health agent by default: ${jsonencode(output.addon_files)}"
  }

  # The add-ons travel in the first control-plane node's bundle, so they may hold the MPI Operator
  # with its CRD, which user data could not.
  assert {
    condition     = strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["60-mpi-operator.yaml"], "name: mpijobs.kubeflow.org") && strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["60-mpi-operator.yaml"], "kind: Deployment")
    error_message = "with mpi_operator the first control-plane pool's add-ons must hold the MPIJob CRD and the operator: ${jsonencode(keys(gpucluster_node_pool.control_plane[0].kubernetes.addons))}"
  }

  # The control-plane certificates are uploaded only while fewer control-plane nodes are Ready
  # than the control plane's size, which both control-plane pools know; a node that replaces the
  # first one reads the stored token under the control-plane-join prefix the control-plane role reads.
  assert {
    condition     = gpucluster_node_pool.control_plane[0].kubernetes.control_plane_size == 3 && gpucluster_node_pool.control_plane_join[0].kubernetes.control_plane_size == 3
    error_message = "both control-plane pools must carry kubernetes.control_plane_size = control_plane.size (3)"
  }
  assert {
    condition     = gpucluster_node_pool.control_plane[0].bootstrap_bundle.join_token_key == gpucluster_node_pool.control_plane_join[0].bootstrap_bundle.join_token_key && anytrue([for r in gpucluster_bootstrap_bucket.bundles[0].readers : r.ram_role_name == "cc-bundle-cp" && startswith(gpucluster_node_pool.control_plane[0].bootstrap_bundle.join_token_key, r.key_prefix)])
    error_message = "the first control-plane pool must read the control-plane-join token key, under a prefix the control-plane role reads: ${jsonencode(gpucluster_node_pool.control_plane[0].bootstrap_bundle)}"
  }

  # Every pool puts its bootstrap in the module's bucket, under a prefix of its own.
  assert {
    condition = alltrue([for p in concat([gpucluster_node_pool.control_plane[0], gpucluster_node_pool.control_plane_join[0]], values(gpucluster_node_pool.worker)) :
    p.bootstrap_bundle != null && p.bootstrap_bundle.bucket == gpucluster_bootstrap_bucket.bundles[0].id]) && length(distinct([gpucluster_node_pool.control_plane[0].bootstrap_bundle.key_prefix, gpucluster_node_pool.control_plane_join[0].bootstrap_bundle.key_prefix, gpucluster_node_pool.worker["gpu"].bootstrap_bundle.key_prefix])) == 3
    error_message = "every pool must put its bootstrap bundle in the module's bucket under its own prefix"
  }
  # Each pool's nodes' user data is the stub of the bundle the apply uploaded under its prefix.
  assert {
    condition = alltrue([for p in concat([gpucluster_node_pool.control_plane[0], gpucluster_node_pool.control_plane_join[0]], values(gpucluster_node_pool.worker)) :
    can(regex("^${p.bootstrap_bundle.key_prefix}/[0-9a-f]{64}\\.tar\\.gz$", p.bootstrap_bundle_key))])
    error_message = "every pool's nodes must boot from a stub naming a bundle under its prefix: ${jsonencode([for p in concat([gpucluster_node_pool.control_plane[0], gpucluster_node_pool.control_plane_join[0]], values(gpucluster_node_pool.worker)) : p.bootstrap_bundle_key])}"
  }
  assert {
    condition     = gpucluster_node_pool.control_plane[0].ram_role_name == "cc-bundle-cp" && gpucluster_node_pool.control_plane_join[0].ram_role_name == "cc-bundle-cp" && gpucluster_node_pool.worker["gpu"].ram_role_name == "cc-bundle-worker"
    error_message = "the control-plane pools must fetch with the control-plane role, the workers with theirs"
  }
  # Each pool's role reads its own prefix; the first control-plane node's (the CA key) is read by
  # the control-plane role only, in the readers and in the policy OSS holds.
  assert {
    condition = alltrue([for p in [gpucluster_node_pool.control_plane[0], gpucluster_node_pool.control_plane_join[0], gpucluster_node_pool.worker["gpu"]] :
    contains([for r in output.bootstrap_bundle.readers : r.ram_role_name if r.key_prefix == p.bootstrap_bundle.key_prefix], p.ram_role_name)])
    error_message = "each pool's role must read its own prefix: ${jsonencode(output.bootstrap_bundle.readers)}"
  }
  assert {
    condition     = [for r in output.bootstrap_bundle.readers : r.ram_role_name if r.key_prefix == gpucluster_node_pool.control_plane[0].bootstrap_bundle.key_prefix] == ["cc-bundle-cp"]
    error_message = "only the control-plane role may read the first control-plane node's prefix: ${jsonencode(output.bootstrap_bundle.readers)}"
  }
  assert {
    condition = alltrue([for s in jsondecode(output.bootstrap_bundle.policy).Statement :
    !anytrue([for res in s.Resource : strcontains(res, "/control-plane")]) if anytrue([for p in s.Principal : strcontains(p, "assumed-role/cc-bundle-worker/")])])
    error_message = "the bucket policy lets the worker role read a control-plane prefix: ${output.bootstrap_bundle.policy}"
  }
  assert {
    condition     = length(output.control_plane.nodes) == 3
    error_message = "expected three control-plane nodes"
  }
}
