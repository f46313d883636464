# CFD / FEA cluster: V100 32 GB (FP64, ECC) nodes spread over physical servers, warm and cold tiers.
include "root" {
  path = find_in_parent_folders("root.hcl")
}

terraform {
  source = "../../../../modules//engineering-simulation"
}

inputs = {
  name = "cfd"
  # The bootstrap bundle (the default) needs two RAM roles trusting ecs.aliyuncs.com; create them first.
  control_plane    = { ram_role_name = "cfd-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "cfd-worker" }
  cidr_block       = "10.22.0.0/16"
  worker_pools = {
    gpu = { size = 2 }
  }
  cold_storage = {
    bucket_name = "cfd-results-example"
  }
}
