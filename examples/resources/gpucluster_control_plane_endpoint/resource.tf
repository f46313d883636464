# A highly available Kubernetes control plane: three API servers behind an internal load
# balancer. The endpoint's address is kubeadm's controlPlaneEndpoint and what the workers join;
# the control-plane pool keeps the load balancer's backend servers equal to its nodes through
# scaling and rolling updates.
resource "gpucluster_control_plane_endpoint" "api" {
  name       = "llm-train-api"
  network_id = gpucluster_rdma_network.training.id
  # vswitch_id defaults to the network's first vSwitch; load_balancer_spec to slb.s1.small.

  tags = {
    project = "foundation-models"
  }
}

resource "gpucluster_node_pool" "control_plane" {
  name          = "llm-train-cp"
  network_id    = gpucluster_rdma_network.training.id
  scenario      = "ai_training"
  instance_type = "ecs.g7.2xlarge"
  size          = 3 # 1, 3 or 5: etcd quorum

  kubernetes = {
    role             = "control_plane"
    api_endpoint     = gpucluster_control_plane_endpoint.api.endpoint
    join_token       = var.join_token
    load_balancer_id = gpucluster_control_plane_endpoint.api.load_balancer_id
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
    api_endpoint = gpucluster_control_plane_endpoint.api.endpoint
    join_token   = var.join_token
  }
}
