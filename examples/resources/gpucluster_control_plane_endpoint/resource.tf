# A highly available Kubernetes control plane: three API servers behind an internal load
# balancer. The endpoint's address is kubeadm's controlPlaneEndpoint and what every node joins;
# each control-plane pool keeps its own nodes among the load balancer's backend servers through
# scaling and rolling updates.
resource "gpucluster_control_plane_endpoint" "api" {
  name       = "llm-train-api"
  network_id = gpucluster_rdma_network.training.id
  # vswitch_id defaults to the network's first vSwitch; load_balancer_spec to slb.s1.small.

  tags = {
    project = "foundation-models"
  }
}

# The cluster CA, made before any node boots: every join pins its hash.
resource "gpucluster_cluster_ca" "cluster" {}

# The first control-plane node: kubeadm init --upload-certs with the CA above.
resource "gpucluster_node_pool" "control_plane" {
  name          = "llm-train-cp"
  network_id    = gpucluster_rdma_network.training.id
  scenario      = "ai_training"
  instance_type = "ecs.g7.2xlarge"
  size          = 1 # kubeadm init runs once

  kubernetes = {
    role               = "control_plane"
    control_plane_init = true
    join_token         = gpucluster_cluster_ca.cluster.join_token
    load_balancer_id   = gpucluster_control_plane_endpoint.api.load_balancer_id
    certificate_key    = gpucluster_cluster_ca.cluster.certificate_key
    ca_cert_pem        = gpucluster_cluster_ca.cluster.cert_pem
    ca_key_pem         = gpucluster_cluster_ca.cluster.private_key_pem
    ca_cert_hash       = gpucluster_cluster_ca.cluster.ca_cert_hash
  }
}

# The other two: kubeadm join --control-plane through the load balancer (stacked etcd).
resource "gpucluster_node_pool" "control_plane_join" {
  name          = "llm-train-cp-join"
  network_id    = gpucluster_rdma_network.training.id
  scenario      = "ai_training"
  instance_type = "ecs.g7.2xlarge"
  size          = 2 # with the first node, 3 etcd members

  kubernetes = {
    role               = "control_plane"
    control_plane_init = false
    join_token         = gpucluster_cluster_ca.cluster.join_token
    load_balancer_id   = gpucluster_control_plane_endpoint.api.load_balancer_id
    certificate_key    = gpucluster_cluster_ca.cluster.certificate_key
    ca_cert_hash       = gpucluster_cluster_ca.cluster.ca_cert_hash
  }
}

resource "gpucluster_node_pool" "workers" {
  name          = "llm-train"
  network_id    = gpucluster_rdma_network.training.id
  scenario      = "ai_training"
  gpu_model     = "A100-80GB"
  gpus_per_node = 8
  size          = 16

  kubernetes = {
    api_endpoint    = gpucluster_control_plane_endpoint.api.endpoint
    api_server_name = gpucluster_control_plane_endpoint.api.api_server_name
    join_token      = gpucluster_cluster_ca.cluster.join_token
    ca_cert_hash    = gpucluster_cluster_ca.cluster.ca_cert_hash
  }
}
