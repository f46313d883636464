# The checks the scenario modules rely on: each wrong input stops the plan at this module's
# variable, before anything is created. (Each scenario module's own test applies its defaults.)

variables {
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names them.
  bootstrap_bundle = { worker_ram_role_name = "sc-test-worker" }
  control_plane    = { ram_role_name = "sc-test-control-plane" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed            = "unused-while-ca-seed-version-is-null"
  scenario           = "ai_training"
  name               = "sc-test"
  cidr_block         = "10.23.0.0/16"
  network            = { erdma = true, placement = "low_latency" }
  gpu_model          = "A100-80GB"
  gpus_per_node      = 8
  worker_pools       = { gpu = { size = 2 } }
  hot_storage        = { capacity_tib = 100, min_throughput_gbps = 20, min_iops = 1000000, node_local_disk = true }
  idle_reclaim_after = "72h"
  join_token_salt    = "module-test"
}

run "plans_a_cluster" {
  command = plan

  assert {
    condition     = gpucluster_rdma_network.this.placement_groups == 1 && length(gpucluster_rdma_network.this.zone_ids) == 1
    error_message = "three nodes in low-latency placement need one placement group in one zone"
  }
}

run "refuses_open_admin_access" {
  command = plan

  variables {
    admin_cidrs = ["0.0.0.0/0"]
  }

  expect_failures = [var.admin_cidrs]
}

run "refuses_iops_beyond_one_disk" {
  command = plan

  variables {
    hot_storage = { capacity_tib = 100, min_throughput_gbps = 20, min_iops = 2000000, node_local_disk = true }
  }

  expect_failures = [var.hot_storage]
}

run "refuses_unknown_placement" {
  command = plan

  variables {
    network = { erdma = true, placement = "tight" }
  }

  expect_failures = [var.network]
}

run "refuses_nodes_without_egress" {
  command = plan

  variables {
    network        = { erdma = true, placement = "low_latency", egress_mode = "none" }
    image_registry = "" # the public registries: the images need the internet
  }

  expect_failures = [gpucluster_rdma_network.this]
}

# With the mainland defaults (the in-VPC mirror, the region's registry-vpc endpoint) the nodes
# need no route out: a network without egress plans.
run "allows_nodes_without_egress_from_inside_the_vpc" {
  command = plan

  variables {
    network = { erdma = true, placement = "low_latency", egress_mode = "none" }
  }

  assert {
    condition     = length(data.gpucluster_node_bootstrap.reach.internet_sources) == 0
    error_message = "With the mainland defaults the bootstrap still downloads from the internet: ${join("; ", data.gpucluster_node_bootstrap.reach.internet_sources)}"
  }
}
