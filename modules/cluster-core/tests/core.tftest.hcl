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

# A highly available control plane: three API servers behind one internal load balancer, whose
# address (not a node's) is what the workers join.
run "ha_control_plane" {
  variables {
    name            = "cc-ha"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    erdma           = true
    join_token_salt = "test-salt"
    control_plane = {
      size = 3
    }
    worker_pools = {
      gpu = {
        size          = 1
        gpu_model     = "A100-80GB"
        gpus_per_node = 8
      }
    }
  }

  assert {
    condition     = length(output.control_plane.nodes) == 3 && startswith(output.control_plane.load_balancer_id, "lb-")
    error_message = "expected three control-plane nodes behind a load balancer: ${jsonencode(output.control_plane)}"
  }
  assert {
    condition     = output.control_plane.api_endpoint == "${output.control_plane.address}:6443" && gpucluster_node_pool.control_plane[0].kubernetes.load_balancer_id == output.control_plane.load_balancer_id
    error_message = "the workers must join the load balancer's address on 6443, got ${output.control_plane.api_endpoint}"
  }
  assert {
    condition     = strcontains(data.gpucluster_node_bootstrap.control_plane[0].cloud_init, output.control_plane.api_endpoint)
    error_message = "kubeadm's controlPlaneEndpoint must be the load balancer's address"
  }
}

# An even control plane has no quorum to gain: refused before anything is planned.
run "control_plane_of_two" {
  command = plan
  variables {
    name            = "cc-even"
    join_token_salt = "test-salt"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    control_plane = {
      size = 2
    }
    worker_pools = {
      gpu = {
        size          = 1
        gpu_model     = "A100-80GB"
        gpus_per_node = 8
      }
    }
  }
  expect_failures = [var.control_plane]
}
