run "network" {
  variables {
    name = "cluster-core-test"
  }
  module {
    source = "./tests/setup"
  }
}

run "refuses_nodes_without_egress" {
  command = plan

  variables {
    name                = "cc-noegress"
    scenario            = "ai_training"
    network_id          = run.network.network_id
    network_egress_mode = "none"
    package_mirror      = "alibaba_vpc"
    join_token_salt     = "test-salt"
    control_plane       = { enabled = false, api_endpoint = "10.61.0.10:6443" }
    worker_pools        = { gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 } }
  }

  expect_failures = [gpucluster_node_pool.worker]
}

run "external_control_plane" {
  variables {
    name            = "cc-test"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    erdma           = true
    join_token_salt = "test-salt"
    control_plane = {
      enabled      = false
      api_endpoint = "10.61.0.10:6443"
    }
    node_local_disk = { category = "cloud_essd", performance_level = "PL3", size_gib = 2000 }
    worker_pools = {
      gpu = {
        size          = 2
        gpu_model     = "A100-80GB"
        gpus_per_node = 8
      }
    }
  }

  assert {
    condition     = output.instance_types["gpu"] == "ecs.ebmgn7ex.32xlarge"
    error_message = "expected ebmgn7ex for 8 A100 80 GB over eRDMA, got ${output.instance_types["gpu"]}"
  }
  assert {
    condition     = length(output.nodes) == 2 && alltrue([for n in output.nodes : n.status == "Running"])
    error_message = "expected two running workers"
  }
}
