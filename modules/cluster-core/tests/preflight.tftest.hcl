# The preflight (gpucluster_preflight) at plan: a cluster that fits prints its summary; one whose
# pools ask more vCPUs than the account's pay-as-you-go quota (the emulator's default, 2,000,000)
# stops the plan at the data source's postcondition.

variables {
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names them.
  bootstrap_bundle = { worker_ram_role_name = "cc-preflight-worker" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed = "unused-while-ca-seed-version-is-null"
}

run "network" {
  variables {
    name = "cc-preflight-test"
  }
  module {
    source = "./tests/setup"
  }
}

run "fits" {
  command = plan

  variables {
    name            = "cc-fits"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    join_token_salt = "test-salt"
    control_plane   = { ram_role_name = "cluster-autoscaler" }
    worker_pools = {
      gpu = { size = 2, gpu_model = "A100-80GB", gpus_per_node = 8, instance_type_fallback = true }
      big = { autoscaling = { min_size = 0, max_size = 4 }, gpu_model = "A100-80GB", gpus_per_node = 8, spot = {} }
    }
  }

  assert {
    condition     = can(regex("^fits: .*vCPUs left under max-postpaid-instance-vcpu-count.*vCPUs left under max-spot-instance-vcpu-count.*API calls", output.preflight_summary))
    error_message = "preflight_summary: ${coalesce(output.preflight_summary, "null")}"
  }

  # A pool with instance_type_fallback hands the preflight the scenario's next candidates, whose
  # stock counts too; one without hands it none.
  assert {
    condition = (
      length(data.gpucluster_scenario.worker["gpu"].candidates) > 1
      && jsonencode([for p in data.gpucluster_preflight.stack[0].pools : p.fallback_instance_types if p.name == "gpu"][0]) == jsonencode(slice(data.gpucluster_scenario.worker["gpu"].candidates[*].instance_type, 1, length(data.gpucluster_scenario.worker["gpu"].candidates)))
      && [for p in data.gpucluster_preflight.stack[0].pools : p.fallback_instance_types if p.name == "big"][0] == null
    )
    error_message = "preflight pools: ${jsonencode(data.gpucluster_preflight.stack[0].pools)}; gpu's candidates: ${jsonencode(data.gpucluster_scenario.worker["gpu"].candidates[*].instance_type)}"
  }
  assert {
    condition     = data.gpucluster_preflight.stack[0].fits && length(data.gpucluster_preflight.stack[0].pools) == 3
    error_message = "The preflight should hold the control plane and both worker pools and find that they fit."
  }
}

run "over_the_vcpu_quota" {
  command = plan

  variables {
    name            = "cc-too-big"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    join_token_salt = "test-salt"
    control_plane   = { enabled = false, api_endpoint = "10.61.0.10:6443" }
    ca_cert_hash    = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
    worker_pools = {
      a = { size = 10000, gpu_model = "A100-80GB", gpus_per_node = 8 }
      b = { size = 10000, gpu_model = "A100-80GB", gpus_per_node = 8 }
    }
  }

  expect_failures = [data.gpucluster_preflight.stack]
}

run "skipped" {
  command = plan

  variables {
    name            = "cc-skipped"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    join_token_salt = "test-salt"
    preflight       = false
    control_plane   = { enabled = false, api_endpoint = "10.61.0.10:6443" }
    ca_cert_hash    = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
    worker_pools = {
      a = { size = 10000, gpu_model = "A100-80GB", gpus_per_node = 8 }
      b = { size = 10000, gpu_model = "A100-80GB", gpus_per_node = 8 }
    }
  }

  assert {
    condition     = output.preflight_summary == null
    error_message = "With preflight = false there is no preflight."
  }
}
