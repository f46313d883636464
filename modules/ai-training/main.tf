# A GPU cluster for large-model training, end to end: an eRDMA network in low-latency placement
# groups, a hot tier and a cold bucket with an Alluxio cache, a control plane, GPU worker pools that
# bootstrap themselves into Kubernetes, and the scenario's manifests and alert rules. The wiring is
# ../scenario-cluster; this module names its scenario.
#
# The call of ../scenario-cluster and the inputs and outputs every scenario shares are linked in
# from ../scenario-cluster/shared (scenario_wiring.tf, scenario_defaults.tf, scenario_inputs.tf, the storage tiers'
# *_storage_input.tf, common_variables.tf, pass_through_variables.tf, common_outputs.tf); the
# scenario's defaults are its row in scenario_defaults.tf. What is this module's own is below.
#
# Defaults implement the ai_training scenario: A100 80 GB-class GPUs, 8 per node, NCCL
# over eRDMA in low-latency placement groups, a hot tier with 1M IOPS node-local flash, a 1 PiB
# cold bucket behind an Alluxio cache sized for a 90% hit rate, GPU utilisation alerts below 85%,
# idle jobs reclaimed after 72 h. Every default can be overridden.

locals {
  scenario = "ai_training"
  # The tier this scenario has no input for.
  warm_storage = null
  # No MPI jobs, so no team queues (the simulation modules set it in mpi_jobs.tf).
  kueue = null
}
