# One bucket for a cluster's bootstrap bundles: the control-plane pool's role reads only the
# control plane's prefix (its first node's bundle holds the cluster CA key), the workers' role
# only the workers'.
resource "gpucluster_bootstrap_bucket" "bundles" {
  name = "train-bootstrap-0001"
  readers = [
    { key_prefix = "gpucluster-bundles/control-plane", ram_role_name = "train-control-plane" },
    { key_prefix = "gpucluster-bundles/workers", ram_role_name = "train-workers" },
  ]
}

resource "gpucluster_node_pool" "workers" {
  name          = "workers"
  network_id    = "rdma-0123456789abcdef"
  scenario      = "ai_training"
  gpu_model     = "H100"
  gpus_per_node = 8
  size          = 2
  ram_role_name = "train-workers"
  bootstrap_bundle = {
    bucket     = gpucluster_bootstrap_bucket.bundles.id
    key_prefix = "gpucluster-bundles/workers"
  }
  kubernetes = {
    api_endpoint = "10.20.0.200:6443"
    join_token   = "abcdef.0123456789abcdef"
    ca_cert_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
  }
}
