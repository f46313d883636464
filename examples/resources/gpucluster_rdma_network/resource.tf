data "gpucluster_zones" "all" {}

# A training network: two zones, low-latency placement groups for NCCL over eRDMA, and SSH and
# the Kubernetes API reachable from the institute's office block and a bastion only.
resource "gpucluster_rdma_network" "training" {
  name        = "llm-training"
  cidr_block  = "10.20.0.0/16"
  zone_ids    = slice(data.gpucluster_zones.all.ids, 0, 2)
  admin_cidrs = ["203.0.113.0/24", "10.99.0.10/32"]

  placement        = "low_latency"
  placement_groups = 4 # 4 x 20 = up to 80 nodes
  erdma            = true

  # Egress for the node bootstrap: a NAT gateway, an EIP and an SNAT entry per vSwitch. "nat" is
  # the default here (the network creates its VPC); one pay-as-you-go EIP billed by bandwidth
  # tops out at 500 Mbit/s, below the scenario's 10 Gbit/s target (the plan warns).
  egress = {
    mode                 = "nat"
    internet_charge_type = "PayByBandwidth"
    bandwidth_mbps       = 500
  }

  tags = {
    project = "foundation-models"
  }

  timeouts = {
    create = "30m"
    delete = "45m"
  }
}

# A simulation network inside an existing research VPC, with explicit vSwitch blocks and an HPC
# cluster for SCC (sccgn*) instance types.
resource "gpucluster_rdma_network" "cfd" {
  name          = "cfd"
  vpc_id        = "vpc-0123456789abcdef"
  cidr_block    = "10.50.8.0/21"
  zone_ids      = ["cn-wulanchabu-a"]
  vswitch_cidrs = { "cn-wulanchabu-a" = "10.50.8.0/24" }
  admin_cidrs   = ["10.50.0.0/24"]
  hpc_cluster   = true
  # The research VPC already routes out through the institute's own NAT gateway; "existing" is
  # the default with vpc_id and creates nothing.
  egress = { mode = "existing" }
}

# Hand the NCCL settings to the job launcher.
output "nccl_env" {
  description = "NCCL environment variables for jobs on the training network."
  value       = gpucluster_rdma_network.training.nccl_env
}

# The EIP members' traffic to the internet comes from, for allow-lists of package mirrors.
output "egress_address" {
  description = "Source address of the training network's traffic to the internet."
  value       = gpucluster_rdma_network.training.egress.eip_address
}
