# The module's defaults against the emulator, with two workers: apply, check what a research team
# gets, destroy. A second run checks plan-time refusals.

variables {
  # These runs apply against the emulator alone: no Kubernetes API answers, so no control-plane
  # node could run the acceptance gate's checks (the cluster tests, internal/clustertest, run the
  # gate against the offline cluster).
  acceptance = { enabled = false }
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names
  # them. registered_as_reported reads each node's registration from the bundle its stub names.
  control_plane    = { ram_role_name = "ait-test-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "ait-test-worker" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed         = "unused-while-ca-seed-version-is-null"
  name            = "ait-test"
  join_token_salt = "module-test"
  cold_storage = {
    bucket_name   = "ait-test-cold-0001"
    force_destroy = true
  }
}

run "defaults" {
  # The emulator's region, cn-wulanchabu, is in mainland China: with image_registry unset every
  # image comes from the region's default registry, and the manifests name no public registry.
  assert {
    condition     = length(output.images) > 10 && alltrue([for i in output.images : startswith(i.reference, "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster/")])
    error_message = "every image should be in the region's default registry: ${jsonencode([for i in output.images : i.reference])}"
  }
  assert {
    condition     = length(regexall("image: (docker\\.io|registry\\.k8s\\.io|ghcr\\.io|quay\\.io|nvcr\\.io)", output.manifests_yaml)) == 0 && strcontains(output.manifests_yaml, "image: registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster/")
    error_message = "the manifests name a public registry or not the default one"
  }
  assert {
    condition     = output.instance_types["gpu"] == "ecs.ebmgn7ex.32xlarge"
    error_message = "8 A100 80 GB-class GPUs over eRDMA should be ebmgn7ex, got ${output.instance_types["gpu"]}"
  }
  assert {
    condition     = length(output.instance_type_reasons["gpu"]) > 0
    error_message = "no reasons for the instance type"
  }
  assert {
    condition     = length([for n in output.nodes : n if n.role == "gpu_worker" && n.status == "Running"]) == 2
    error_message = "expected two running GPU workers: ${jsonencode(output.nodes)}"
  }
  assert {
    condition     = length([for n in output.nodes : n if n.role == "control_plane" && n.instance_type == "ecs.g7.2xlarge"]) == 1
    error_message = "expected one ecs.g7.2xlarge control-plane node"
  }
  assert {
    condition     = output.control_plane.api_endpoint == "${output.control_plane.address}:6443" && startswith(output.control_plane.load_balancer_id, "lb-") && !contains([for n in output.nodes : "${n.private_ip}:6443"], output.control_plane.api_endpoint)
    error_message = "workers must join the control plane's load balancer on 6443, not a node, got ${output.control_plane.api_endpoint}"
  }
  # What the module reports is what the nodes' kubelets register (the pool's own bootstrap
  # renders the pool's node_labels/node_taints into kubeadm; internal/bootstrap checks that).
  assert {
    condition     = output.worker_pools["gpu"].node_labels["nvidia.com/gpu.present"] == "true" && output.worker_pools["gpu"].node_labels["gpucluster.io/scenario"] == "ai_training" && jsonencode(output.worker_pools["gpu"].node_taints) == jsonencode(["nvidia.com/gpu:NoSchedule"])
    error_message = "GPU workers register nvidia.com/gpu.present=true and the taint nvidia.com/gpu:NoSchedule: ${jsonencode(output.worker_pools)}"
  }
  assert {
    condition     = output.control_plane.ca_cert_hash != null && startswith(output.control_plane.ca_cert_hash, "sha256:")
    error_message = "the module makes the cluster CA that every join pins"
  }
  assert {
    condition     = output.gpu_count == 16
    error_message = "two 8-GPU nodes make 16 GPUs, got ${output.gpu_count}"
  }
  assert {
    condition     = keys(output.storage_ids) == ["cold", "hot"] && strcontains(output.mount_commands["hot"], "/mnt/ait-test-hot")
    error_message = "expected hot and cold tiers with a hot mount command: ${jsonencode(output.storage_ids)}"
  }
  assert {
    condition     = output.storage_sizing["hot"].throughput_gbps >= 20
    error_message = "the hot tier must reach the 20 GB/s default: ${jsonencode(output.storage_sizing["hot"])}"
  }
  assert {
    condition     = strcontains(output.alluxio_properties, "ait-test-cold-0001")
    error_message = "the Alluxio cache must front the cold bucket"
  }
  assert {
    condition     = output.alert_rules.thresholds.gpu_util_below_percent == 85 && output.alert_rules.thresholds.memory_critical_percent == 95
    error_message = "training alerts: GPU utilisation below 85%, memory critical at 95%"
  }
  assert {
    condition     = strcontains(output.manifests_yaml, "72h") || strcontains(output.manifests_yaml, "259200")
    error_message = "the idle reaper must reclaim after 72 h"
  }
  assert {
    condition     = length(output.nccl_env) > 0
    error_message = "the eRDMA network must give an NCCL environment"
  }
  assert {
    condition     = output.estimated_hourly_price > 0
    error_message = "the price must be known"
  }
  assert {
    condition     = !strcontains(jsonencode(output.nodes), nonsensitive(output.join_token))
    error_message = "the join token leaked into a non-sensitive output"
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
