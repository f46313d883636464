# GPU pools boot from a node image baked for them (node_image.bake, on by default). Changing what
# goes into the image (here the driver) bakes a new one, rolls the same pool onto it a node at a
# time, and deletes the old image after: the apply would fail if the old one went first, as the
# vendor refuses to delete an image instances still run from.

run "network" {
  variables {
    name = "cluster-core-image"
  }
  module {
    source = "./tests/setup"
  }
}

variables {
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names them.
  bootstrap_bundle = { worker_ram_role_name = "cc-node-image-worker" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed         = "unused-while-ca-seed-version-is-null"
  name            = "cc-image"
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

run "baked" {
  variables {
    network_id = run.network.network_id
  }

  assert {
    condition     = gpucluster_node_pool.worker["gpu"].image_id == output.node_images["gpu"].id && startswith(output.node_images["gpu"].id, "m-")
    error_message = "the GPU pool must boot from its baked image, got image_id ${gpucluster_node_pool.worker["gpu"].image_id} and images ${jsonencode(output.node_images)}"
  }
  # 8 x A100 80 GB over eRDMA is ebmgn7ex, an NVSwitch type: the image holds Fabric Manager and
  # eRDMA, baked on the smallest type that has both.
  assert {
    condition     = output.node_images["gpu"].nvswitch && gpucluster_node_image.worker["gpu"].erdma && output.node_images["gpu"].builder_instance_type == "ecs.gn8v-8x.16xlarge"
    error_message = "expected an NVSwitch eRDMA image baked on the smallest NVSwitch type with eRDMA, got ${jsonencode(output.node_images["gpu"])}"
  }
  assert {
    condition     = length(output.nodes) == 2 && alltrue([for n in output.nodes : n.status == "Running"])
    error_message = "expected two running workers"
  }
}

run "new_driver" {
  variables {
    network_id        = run.network.network_id
    software_versions = { driver = "550.127.05" }
    # What the first run built, for the assertions (they see variables, not other runs).
    pool_id_before  = run.baked.worker_pools["gpu"].id
    image_before    = run.baked.node_images["gpu"].id
    node_ids_before = [for n in run.baked.nodes : n.id]
  }

  assert {
    condition     = output.node_images["gpu"].id != var.image_before && gpucluster_node_pool.worker["gpu"].image_id == output.node_images["gpu"].id
    error_message = "a new driver must bake a new image (${var.image_before} kept) and the pool boot from it"
  }
  assert {
    condition     = output.worker_pools["gpu"].id == var.pool_id_before
    error_message = "the pool was replaced: a new image rolls it in place"
  }
  assert {
    condition     = length(setintersection([for n in output.nodes : n.id], var.node_ids_before)) == 0 && length(output.nodes) == 2 && alltrue([for n in output.nodes : n.status == "Running"])
    error_message = "expected both workers rolled onto the new image and running"
  }
}

run "not_baked" {
  variables {
    network_id   = run.network.network_id
    node_image   = { bake = false }
    image_before = run.new_driver.node_images["gpu"].id
  }

  assert {
    condition     = length(output.node_images) == 0 && gpucluster_node_pool.worker["gpu"].image_id != var.image_before
    error_message = "bake = false must boot the pool from its own image_id, got ${gpucluster_node_pool.worker["gpu"].image_id}"
  }
}
