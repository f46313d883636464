# Eight-GPU A100 80 GB-class nodes for large-model training. The instance type is left to the
# catalog: it is planned from scenario, gpu_model and gpus_per_node, and the plan fails with the
# reason when the combination cannot work.
resource "gpucluster_node_pool" "training" {
  name          = "llm-train"
  network_id    = gpucluster_rdma_network.training.id
  scenario      = "ai_training"
  gpu_model     = "A100-80GB"
  gpus_per_node = 8
  size          = 16
  min_size      = 12 # all-or-nothing floor when stock runs short

  # Out of stock in every zone: go on with the catalog's next candidate.
  instance_type_fallback = true
  auto_release_after     = "72h" # reclaim idle capacity

  data_disks = [{
    category          = "cloud_essd"
    performance_level = "PL3"
    size_gib          = 2048 # node-local hot tier
  }]

  kubernetes = {
    labels = { "team" = "foundation-models" }
  }

  # Ubuntu packages from the in-VPC mirror; the NVIDIA and Kubernetes downloads still go through
  # the network's egress (a network with egress.mode = "none" is refused at plan).
  package_mirror = "alibaba_vpc"

  update_strategy = {
    max_unavailable = 2
  }

  tags = {
    project = "foundation-models"
  }

  timeouts = {
    create = "60m"
  }
}

# A pinned type for CFD on spot capacity, without placement constraints.
resource "gpucluster_node_pool" "cfd" {
  name          = "cfd-solvers"
  network_id    = gpucluster_rdma_network.cfd.id
  scenario      = "engineering_simulation"
  instance_type = "ecs.gn7e-c16g1.4xlarge"
  size          = 4

  spot = {
    strategy = "SpotAsPriceGo"
  }
}

# Burst training nodes the Kubernetes Cluster Autoscaler sizes between 0 and 40: an Auto Scaling
# group over the network's zones, spot first with pay-as-you-go when spot runs out, and a plan
# refused if 40 nodes could cost more than 1,500 per hour. After the autoscaler resizes the
# group, a plan shows no change. Its nodes register with a provider id the autoscaler maps to the
# group, and, being spot, run a handler that cordons and drains a node when its reclaim is announced.
resource "gpucluster_node_pool" "burst" {
  name                   = "llm-burst"
  network_id             = gpucluster_rdma_network.training.id
  scenario               = "ai_training"
  gpu_model              = "A100-80GB"
  gpus_per_node          = 8
  instance_type_fallback = true # the catalog's next candidates are the group's fallback types

  spot = {
    strategy = "SpotAsPriceGo"
  }

  autoscaling = {
    min_size              = 0
    max_size              = 40
    on_demand_base        = 2 # two pay-as-you-go nodes whatever happens to spot
    on_demand_percentage  = 0 # every node above the base is spot
    fallback_to_on_demand = true
    max_hourly_price      = 1500 # budget guard at max_size
  }
}

# The Cluster Autoscaler for the burst pool, to run on the control plane, whose nodes need an
# instance RAM role (ram_role_name on their pool) allowed the Auto Scaling calls: the autoscaler
# takes its credentials from it, and no AccessKey is in the manifests.
data "gpucluster_kubernetes_manifests" "autoscaler" {
  scenario      = "ai_training"
  node_count    = 1
  gpus_per_node = 8

  cluster_autoscaler = {
    node_groups = [{
      name             = gpucluster_node_pool.burst.name
      scaling_group_id = gpucluster_node_pool.burst.scaling_group_id
      min_size         = gpucluster_node_pool.burst.autoscaling.min_size
      max_size         = gpucluster_node_pool.burst.autoscaling.max_size
    }]
    scale_down_unneeded_time = "15m" # an idle GPU node goes after 15 minutes
  }
}

output "cluster_autoscaler_yaml" {
  description = "The Cluster Autoscaler (--nodes=0:40:<group id>): kubectl apply -f, or the first control-plane node's add-ons."
  value       = data.gpucluster_kubernetes_manifests.autoscaler.cluster_autoscaler.yaml
}

output "training_nodes" {
  description = "Id, zone and private address of every training node."
  value       = [for n in gpucluster_node_pool.training.nodes : "${n.id} ${n.zone_id} ${n.private_ip}"]
}

output "training_findings" {
  description = "Where the training pool falls short of the scenario's targets."
  value       = [for f in gpucluster_node_pool.training.findings : "${f.severity}: ${f.message}"]
}
