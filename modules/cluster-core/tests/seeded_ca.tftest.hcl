# A cluster CA from ca_seed: the CA key, the certificate key and the join token are derived from
# the seed and reach the pools through write-only arguments only, so none of them is in state;
# the CA hash is known at plan and every pool pins it. (The offline Kubernetes test
# TestAccClusterScenario_molecularDynamics shows such a cluster forms, and reads the state file.)

run "network" {
  variables {
    name = "cc-seeded-test"
  }
  module {
    source = "./tests/setup"
  }
}

run "seeded_ca" {
  variables {
    name            = "cc-seeded"
    scenario        = "ai_training"
    network_id      = run.network.network_id
    ca_seed         = "0123456789abcdef0123456789abcdef-cc-seeded-test"
    ca_seed_version = 1
    # Bundles (the default): the next run reads the nodes' registrations from the bundles their
    # stubs name, where the seeded secrets went.
    control_plane    = { ram_role_name = "cc-seeded-control-plane" }
    bootstrap_bundle = { worker_ram_role_name = "cc-seeded-worker" }
    worker_pools = {
      gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 }
    }
  }

  assert {
    condition     = gpucluster_cluster_ca.cluster[0].private_key_pem == null && gpucluster_cluster_ca.cluster[0].certificate_key == null && gpucluster_cluster_ca.cluster[0].join_token == null
    error_message = "The seeded CA keeps a secret in state."
  }
  assert {
    condition     = gpucluster_node_pool.control_plane[0].kubernetes.ca_key_pem == null && gpucluster_node_pool.control_plane[0].kubernetes.certificate_key == null && gpucluster_node_pool.control_plane[0].kubernetes.join_token == null
    error_message = "The first control-plane pool keeps the CA key, the certificate key or the join token in state."
  }
  assert {
    condition     = alltrue([for p in gpucluster_node_pool.worker : p.kubernetes.join_token == null && p.kubernetes.ca_cert_hash == gpucluster_cluster_ca.cluster[0].ca_cert_hash])
    error_message = "A worker pool keeps the join token in state or does not pin the seeded CA."
  }
  assert {
    condition     = output.join_token == null
    error_message = "With ca_seed the join_token output must be null: the token is in no state."
  }
}

# The secrets reached the nodes: read back from the user data ECS holds, exactly one pool runs
# kubeadm init and every GPU worker joins the load balancer with the seeded CA pinned.
run "nodes_register_with_the_seeded_ca" {
  module {
    source = "../../testing/node-registrations"
  }
  variables {
    nodes           = run.seeded_ca.nodes
    worker_pools    = run.seeded_ca.worker_pools
    api_endpoint    = run.seeded_ca.control_plane.api_endpoint
    api_server_name = run.seeded_ca.control_plane.api_server_name
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
