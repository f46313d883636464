# Molecular dynamics cluster: FP64 and >= 1 TB/s GPUs with MPI over eRDMA, hot and warm tiers.
include "root" {
  path = find_in_parent_folders("root.hcl")
}

terraform {
  source = "../../../../modules//molecular-dynamics"
}

inputs = {
  name       = "md-sim"
  cidr_block = "10.21.0.0/16"
  worker_pools = {
    gpu = { size = 4 }
  }
}
