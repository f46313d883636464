# Large-model training cluster: the module's defaults (8 x A100 80 GB class over eRDMA, hot tier,
# 1 PiB cold bucket behind Alluxio), four GPU nodes.
include "root" {
  path = find_in_parent_folders("root.hcl")
}

terraform {
  # The double slash copies all of modules/, so the module's ../cluster-core and ../storage-tiers resolve.
  source = "../../../../modules//ai-training"
}

inputs = {
  name = "llm-train"
  # The bootstrap bundle (the default) needs two RAM roles trusting ecs.aliyuncs.com; create them first.
  control_plane    = { ram_role_name = "llm-train-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "llm-train-worker" }
  worker_pools = {
    gpu = { size = 4 }
  }
  cold_storage = {
    bucket_name = "llm-train-datasets-example"
  }
}
