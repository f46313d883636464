# Turning the node-local disk on for a running cluster updates its pool in place: the same pool
# (same id) rolls its nodes onto machines with the disk, one at a time. Nothing is destroyed and
# created again at another address.

run "network" {
  variables {
    name = "cluster-core-disk"
  }
  module {
    source = "./tests/setup"
  }
}

variables {
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names them.
  bootstrap_bundle = { worker_ram_role_name = "cc-node-local-disk-worker" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed         = "unused-while-ca-seed-version-is-null"
  name            = "cc-disk"
  scenario        = "ai_training"
  erdma           = true
  join_token_salt = "test-salt"
  # Nothing boots these nodes (the emulator runs no node agent here), so none reports a join on
  # its console: the roll goes on without waiting for one.
  join_timeout = "0s"
  # Nor does any drain itself: nothing answers Cloud Assistant on these nodes.
  drain_timeout = "0s"
  control_plane = {
    enabled      = false
    api_endpoint = "10.61.0.10:6443"
  }
  ca_cert_hash = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
  worker_pools = {
    gpu = {
      size            = 2
      gpu_model       = "A100-80GB"
      gpus_per_node   = 8
      max_unavailable = 1
    }
  }
}

run "without_disk" {
  variables {
    network_id = run.network.network_id
  }

  assert {
    condition     = gpucluster_node_pool.worker["gpu"].data_disks == null
    error_message = "expected no data disk without node_local_disk"
  }
  assert {
    condition     = length(output.nodes) == 2 && alltrue([for n in output.nodes : n.status == "Running"])
    error_message = "expected two running workers"
  }
}

run "disk_on" {
  variables {
    network_id      = run.network.network_id
    node_local_disk = { category = "cloud_essd", performance_level = "PL3", size_gib = 1300 }
    # What the first run built, for the assertions (they see variables, not other runs).
    pool_id_before  = run.without_disk.worker_pools["gpu"].id
    node_ids_before = [for n in run.without_disk.nodes : n.id]
  }

  assert {
    condition     = output.worker_pools["gpu"].id == var.pool_id_before
    error_message = "the pool was replaced (id ${var.pool_id_before} became ${output.worker_pools["gpu"].id}): turning node_local_disk on must update it in place"
  }
  assert {
    condition     = length(setintersection([for n in output.nodes : n.id], var.node_ids_before)) == 0
    error_message = "some nodes were not rolled onto machines with the disk"
  }
  assert {
    condition     = length(output.nodes) == 2 && alltrue([for n in output.nodes : n.status == "Running"])
    error_message = "expected two running workers after the roll"
  }
  assert {
    condition     = gpucluster_node_pool.worker["gpu"].data_disks[0].size_gib == 1300
    error_message = "expected the pool to carry the 1300 GiB node-local disk"
  }
}
