# The module's defaults against the emulator, with two workers: apply, check, destroy.

variables {
  name            = "md-test"
  join_token_salt = "module-test"
}

run "defaults" {
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
