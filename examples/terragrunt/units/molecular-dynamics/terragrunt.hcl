# Molecular dynamics cluster: FP64 and >= 1 TB/s GPUs with MPI over eRDMA, hot and warm tiers.
include "root" {
  path = find_in_parent_folders("root.hcl")
}

terraform {
  source = "../../../../modules//molecular-dynamics"
}

inputs = {
  name = "md-sim"
  # The bootstrap bundle (the default) needs two RAM roles trusting ecs.aliyuncs.com; create them first.
  control_plane    = { ram_role_name = "md-sim-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "md-sim-worker" }
  cidr_block       = "10.21.0.0/16"
  worker_pools = {
    gpu = { size = 4 }
  }
}
