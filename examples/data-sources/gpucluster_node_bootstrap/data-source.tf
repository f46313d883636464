# A kubeadm bootstrap token: 6 + 16 lower-case letters and digits.
resource "random_string" "token_id" {
  length  = 6
  upper   = false
  special = false
}

resource "random_string" "token_secret" {
  length  = 16
  upper   = false
  special = false
}

locals {
  join_token = "${random_string.token_id.result}.${random_string.token_secret.result}"
}

# The cluster CA (give its cert_pem and private_key_pem to the control plane's kubeadm as
# /etc/kubernetes/pki/ca.crt and ca.key, as gpucluster_node_pool does).
resource "gpucluster_cluster_ca" "cluster" {}

data "gpucluster_node_bootstrap" "control_plane" {
  role = "control_plane"
  # Ubuntu packages and PyPI from Alibaba Cloud's in-VPC mirror; internet_sources lists what
  # still comes from the internet (the Kubernetes packages and images).
  package_mirror = "alibaba_vpc"
  kubernetes = {
    join_token = local.join_token
    pod_subnet = "10.244.0.0/16"
  }
}

data "gpucluster_node_bootstrap" "gpu_worker" {
  role  = "gpu_worker"
  erdma = true
  kubernetes = {
    api_endpoint = "10.0.0.10:6443"
    join_token   = local.join_token
    ca_cert_hash = gpucluster_cluster_ca.cluster.ca_cert_hash # the worker pins the cluster CA
    labels       = { "gpucluster.io/scenario" = "ai_training" }
  }
  mounts   = ["0a1b2c-xyz.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm nfs vers=3,nolock,proto=tcp,_netdev,nofail 0 0"]
  nccl_env = { NCCL_DEBUG = "WARN" }
  # versions = { driver = "535.183.01", cuda = "11.8", nccl = "2.15.5", kubernetes = "1.33" }  # the defaults
}

# Sensitive: the documents carry the join token. Pass them to the instances' user_data.
output "control_plane_cloud_init" {
  description = "cloud-init for the control-plane node."
  value       = data.gpucluster_node_bootstrap.control_plane.cloud_init
  sensitive   = true
}

output "worker_cloud_init" {
  description = "cloud-init for the GPU workers."
  value       = data.gpucluster_node_bootstrap.gpu_worker.cloud_init
  sensitive   = true
}
