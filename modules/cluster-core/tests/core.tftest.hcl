run "network" {
  variables {
    name = "cluster-core-test"
  }
  module {
    source = "./tests/setup"
  }
}

variables {
  # The bootstrap bundle is on by default; the module cannot create RAM roles, so the test names them.
  bootstrap_bundle = { worker_ram_role_name = "cc-core-worker" }
  control_plane    = { ram_role_name = "cc-core-control-plane" }
  # terraform test before 1.17 refuses to apply with an ephemeral variable left unset
  # (hashicorp/terraform#38974); the seed is unused while ca_seed_version is null.
  ca_seed = "unused-while-ca-seed-version-is-null"
}

run "refuses_nodes_without_egress" {
  command = plan

  variables {
    name                = "cc-noegress"
    scenario            = "ai_training"
    network_id          = run.network.network_id
    network_egress_mode = "none"
    package_mirror      = "alibaba_vpc"
    image_registry      = "" # the public registries: the images need the internet
    join_token_salt     = "test-salt"
    control_plane       = { enabled = false, api_endpoint = "10.61.0.10:6443" }
    ca_cert_hash        = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
    worker_pools        = { gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 } }
  }

  # The image is checked first: its builder downloads what the nodes would.
  expect_failures = [gpucluster_node_image.worker]
}

# The mainland defaults (the in-VPC mirror and the region's registry-vpc endpoint) take
# everything from inside the VPC: no route out needed, nothing refused.
run "allows_nodes_without_egress_from_inside_the_vpc" {
  command = plan

  variables {
    name                = "cc-closed"
    scenario            = "ai_training"
    network_id          = run.network.network_id
    network_egress_mode = "none"
    join_token_salt     = "test-salt"
    control_plane       = { enabled = false, api_endpoint = "10.61.0.10:6443" }
    ca_cert_hash        = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
    worker_pools        = { gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 } }
  }

  assert {
    condition     = length(data.gpucluster_node_bootstrap.nccl.internet_sources) == 0
    error_message = "With the mainland defaults the bootstrap still downloads from the internet: ${join("; ", data.gpucluster_node_bootstrap.nccl.internet_sources)}"
  }
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
    ca_cert_hash    = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
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
      size          = 3
      ram_role_name = "cc-core-control-plane"
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
  # kubeadm's controlPlaneEndpoint is the load balancer's API server name, which the control-plane
  # pools take from load_balancer_id and the workers are given (to map it to api_endpoint).
  assert {
    condition     = output.control_plane.api_server_name == "api.${output.control_plane.load_balancer_id}.gpucluster.internal" && gpucluster_node_pool.worker["gpu"].kubernetes.api_server_name == output.control_plane.api_server_name
    error_message = "the workers must be given the load balancer's API server name, got ${jsonencode(output.control_plane)}"
  }
  # One kubeadm init: the first pool has one node, the other two join it.
  assert {
    condition     = gpucluster_node_pool.control_plane[0].size == 1 && gpucluster_node_pool.control_plane[0].kubernetes.control_plane_init && gpucluster_node_pool.control_plane_join[0].size == 2 && !gpucluster_node_pool.control_plane_join[0].kubernetes.control_plane_init
    error_message = "expected a first control-plane pool of 1 (kubeadm init) and a joining pool of 2"
  }
  # Every join pins the module's CA.
  assert {
    condition     = alltrue([for p in concat([gpucluster_node_pool.control_plane[0], gpucluster_node_pool.control_plane_join[0]], values(gpucluster_node_pool.worker)) : p.kubernetes.ca_cert_hash == gpucluster_cluster_ca.cluster[0].ca_cert_hash]) && output.control_plane.ca_cert_hash == gpucluster_cluster_ca.cluster[0].ca_cert_hash
    error_message = "every pool must pin the cluster CA made by the module"
  }
  # The outputs' labels and taints are the pools' node_labels/node_taints, which the provider
  # renders into each node's kubeadm NodeRegistration (internal/bootstrap TestRenderWholeCluster):
  # the GPU ones included.
  assert {
    condition     = output.worker_pools["gpu"].node_labels == gpucluster_node_pool.worker["gpu"].node_labels && output.worker_pools["gpu"].node_taints == gpucluster_node_pool.worker["gpu"].node_taints
    error_message = "the outputs' labels and taints must be the pool's"
  }
  assert {
    condition     = output.worker_pools["gpu"].node_labels["nvidia.com/gpu.present"] == "true" && output.worker_pools["gpu"].node_labels["gpucluster.io/node-role"] == "gpu-worker" && jsonencode(output.worker_pools["gpu"].node_taints) == jsonencode(["nvidia.com/gpu:NoSchedule"])
    error_message = "GPU workers register nvidia.com/gpu.present=true, the worker role label and the taint nvidia.com/gpu:NoSchedule, got ${jsonencode(output.worker_pools["gpu"])}"
  }
  # The first node applies the cluster's manifests itself.
  assert {
    condition     = gpucluster_node_pool.control_plane[0].kubernetes.addons == data.gpucluster_kubernetes_manifests.cluster.addons && strcontains(gpucluster_node_pool.control_plane[0].kubernetes.addons["10-device-plugin.yaml"], "nvidia-device-plugin")
    error_message = "the first control-plane node must apply the cluster's add-ons (device plugin, dcgm-exporter, monitoring, reaper)"
  }
  # Both control-plane pools boot from the control plane's own image (node_image.bake, on by
  # default): no GPU software, baked on a CPU type, at the cluster's registry and mirror.
  assert {
    condition     = startswith(output.control_plane_image.id, "m-") && gpucluster_node_pool.control_plane[0].image_id == output.control_plane_image.id && gpucluster_node_pool.control_plane_join[0].image_id == output.control_plane_image.id
    error_message = "both control-plane pools must boot from the control-plane image, got ${gpucluster_node_pool.control_plane[0].image_id}, ${gpucluster_node_pool.control_plane_join[0].image_id} and ${jsonencode(output.control_plane_image)}"
  }
  assert {
    condition     = gpucluster_node_image.control_plane[0].role == "control_plane" && !gpucluster_node_image.control_plane[0].nvswitch && !startswith(output.control_plane_image.builder_instance_type, "ecs.gn") && !startswith(output.control_plane_image.builder_instance_type, "ecs.ebm") && gpucluster_node_image.control_plane[0].image_registry == gpucluster_node_pool.control_plane[0].kubernetes.image_registry
    error_message = "the control-plane image must be role control_plane, without Fabric Manager, baked on a CPU type with the pools' registry, got ${jsonencode(output.control_plane_image)}"
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
      size          = 2
      ram_role_name = "cc-core-control-plane"
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
