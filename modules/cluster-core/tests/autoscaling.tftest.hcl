# Autoscaling and spot worker pools: an Auto Scaling group per autoscaling pool, its id in the
# outputs, and the Cluster Autoscaler (naming every group with its bounds) in the add-ons the first
# control-plane node applies.

variables {
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names them.
  bootstrap_bundle = { worker_ram_role_name = "cc-autoscaling-worker" }
  control_plane    = { ram_role_name = "cc-autoscaling-control-plane" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed = "unused-while-ca-seed-version-is-null"
}

run "network" {
  variables {
    name = "cc-autoscaling-test"
  }
  module {
    source = "./tests/setup"
  }
}

run "size_and_autoscaling_together" {
  command = plan

  variables {
    name            = "cc-both"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    join_token_salt = "test-salt"
    worker_pools = {
      gpu = { size = 2, autoscaling = { min_size = 0, max_size = 4 }, gpu_model = "A100-80GB", gpus_per_node = 8 }
    }
  }

  expect_failures = [var.worker_pools]
}

run "autoscaling_min_over_max" {
  command = plan

  variables {
    name            = "cc-minmax"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    join_token_salt = "test-salt"
    worker_pools = {
      gpu = { autoscaling = { min_size = 5, max_size = 4 }, gpu_model = "A100-80GB", gpus_per_node = 8 }
    }
  }

  expect_failures = [var.worker_pools]
}

run "autoscaling_and_spot_pools" {
  variables {
    name            = "cc-as"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    erdma           = true
    join_token_salt = "test-salt"
    control_plane   = { ram_role_name = "cc-as-control-plane" }
    worker_pools = {
      gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 }
      burst = {
        gpu_model     = "A100-80GB"
        gpus_per_node = 8
        autoscaling   = { min_size = 1, max_size = 20, on_demand_percentage = 25 }
        spot          = { strategy = "SpotAsPriceGo" }
      }
      scale0 = {
        gpu_model     = "A100-80GB"
        gpus_per_node = 8
        autoscaling   = { min_size = 0, max_size = 6 }
      }
    }
  }

  assert {
    condition     = keys(output.scaling_group_ids) == ["burst", "scale0"] && alltrue([for id in values(output.scaling_group_ids) : startswith(id, "asg-")])
    error_message = "expected a scaling group for each autoscaling pool and none for the fixed one, got ${jsonencode(output.scaling_group_ids)}"
  }
  assert {
    condition     = output.worker_pools["burst"].scaling_group_id == gpucluster_node_pool.worker_autoscaling["burst"].scaling_group_id && output.worker_pools["burst"].autoscaling.max_size == 20 && output.worker_pools["gpu"].scaling_group_id == null
    error_message = "worker_pools must name each autoscaling pool's group and bounds: ${jsonencode(output.worker_pools)}"
  }
  assert {
    condition     = gpucluster_node_pool.worker_autoscaling["burst"].spot.strategy == "SpotAsPriceGo" && gpucluster_node_pool.worker_autoscaling["burst"].autoscaling.on_demand_percentage == 25 && gpucluster_node_pool.worker["gpu"].spot == null
    error_message = "the burst pool's spot mix must reach the node pool"
  }
  # Every autoscaling pool is a node group of the autoscaler, with its bounds, in the add-ons
  # the first control-plane node applies.
  assert {
    condition = alltrue([for f in ["--nodes=1:20:${output.scaling_group_ids["burst"]}", "--nodes=0:6:${output.scaling_group_ids["scale0"]}", "--cloud-provider=alicloud"] :
    strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["35-cluster-autoscaler.yaml"], f)])
    error_message = "the first control-plane node's add-ons must run the Cluster Autoscaler over every autoscaling pool"
  }
  assert {
    condition     = output.cluster_autoscaler_yaml == data.gpucluster_kubernetes_manifests.cluster.cluster_autoscaler.yaml && !strcontains(output.cluster_autoscaler_yaml, "ACCESS_KEY") && !strcontains(output.cluster_autoscaler_yaml, "kind: Secret")
    error_message = "the autoscaler output must be what the add-ons apply, and carry no AccessKey"
  }
  # The autoscaler authenticates with the control-plane nodes' RAM role; the workers carry only
  # their own (bootstrap_bundle.worker_ram_role_name, which fetches their bundles).
  assert {
    condition     = gpucluster_node_pool.control_plane[0].ram_role_name == "cc-as-control-plane" && gpucluster_node_pool.worker_autoscaling["burst"].ram_role_name == "cc-autoscaling-worker"
    error_message = "the control plane must carry the RAM role the Cluster Autoscaler uses, and only it"
  }
  # The fixed pool's node and the burst pool's min_size node run; scale0 has none.
  assert {
    condition     = length(gpucluster_node_pool.worker_autoscaling["burst"].nodes) == 1 && length(gpucluster_node_pool.worker_autoscaling["scale0"].nodes) == 0 && length(gpucluster_node_pool.worker["gpu"].nodes) == 1
    error_message = "expected the autoscaling pools at min_size"
  }
}

# Without autoscaling pools there is no autoscaler.
run "fixed_pools_only" {
  command = plan

  variables {
    name            = "cc-fixed"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    join_token_salt = "test-salt"
    worker_pools = {
      gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 }
    }
  }

  assert {
    condition     = data.gpucluster_kubernetes_manifests.cluster.cluster_autoscaler == null
    error_message = "a cluster without autoscaling pools has no Cluster Autoscaler"
  }
}

# Autoscaling pools with a control plane that has no RAM role: the autoscaler would have no
# credentials, which the module says at plan.
run "autoscaling_without_control_plane_role" {
  command = plan

  variables {
    name            = "cc-norole"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    join_token_salt = "test-salt"
    # No control-plane role, so inline user data: the bundle would need one too.
    control_plane    = {}
    bootstrap_bundle = { enabled = false }
    worker_pools = {
      gpu = { autoscaling = { min_size = 0, max_size = 4 }, gpu_model = "A100-80GB", gpus_per_node = 8 }
    }
  }

  expect_failures = [check.cluster_autoscaler_credentials]
}
