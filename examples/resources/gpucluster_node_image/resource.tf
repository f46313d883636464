# A GPU node image for the 8 x A100 NVSwitch pools of a training cluster: the driver, Fabric
# Manager at the driver's version, the container toolkit, containerd and the Kubernetes packages
# of the pinned release, and the images every GPU node runs, all from the region's in-VPC mirror
# and registry. Nodes booted from it only mount and join.
resource "gpucluster_node_image" "a100" {
  name                  = "llm-train-a100-v1"
  network_id            = gpucluster_rdma_network.training.id
  builder_instance_type = "ecs.ebmgn7ex.32xlarge" # an NVSwitch type: Fabric Manager starts only there
  nvswitch              = true
  erdma                 = true

  versions = {
    driver     = "535.183.01"
    kubernetes = "1.33"
  }

  # Bake the new image, roll the pools onto it, then delete the old one.
  lifecycle {
    create_before_destroy = true
  }
}

resource "gpucluster_node_pool" "training" {
  name       = "llm-train-a100"
  network_id = gpucluster_rdma_network.training.id
  scenario   = "ai_training"
  gpu_model  = "A100"
  size       = 4
  image_id   = gpucluster_node_image.a100.id

  kubernetes = {
    api_endpoint    = gpucluster_control_plane_endpoint.api.endpoint
    api_server_name = gpucluster_control_plane_endpoint.api.api_server_name
    join_token      = gpucluster_cluster_ca.cluster.join_token
    ca_cert_hash    = gpucluster_cluster_ca.cluster.ca_cert_hash
    versions = {
      driver     = "535.183.01"
      kubernetes = "1.33"
    }
  }
}
