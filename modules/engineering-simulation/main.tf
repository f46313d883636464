# A GPU cluster for engineering simulation (CFD / FEA), end to end: a network whose nodes are spread
# over distinct physical servers, a warm tier and a cold bucket, a control plane, GPU worker pools
# that bootstrap themselves into Kubernetes, and the scenario's manifests and alert rules. The wiring
# is ../scenario-cluster; this module names its scenario.
#
# The call of ../scenario-cluster and the inputs and outputs every scenario shares are linked in
# from ../scenario-cluster/shared (scenario_wiring.tf, scenario_defaults.tf, scenario_inputs.tf, the storage tiers'
# *_storage_input.tf, common_variables.tf, pass_through_variables.tf, common_outputs.tf); the
# scenario's defaults are its row in scenario_defaults.tf. What is this module's own is below.
#
# Defaults implement the engineering_simulation scenario (CFD / FEA): double precision and
# ECC memory (V100 32 GB, gn6e: 7.8 TFLOPS FP64; the matrix's V100S, which Alibaba offers as V100),
# 8 per node, nodes spread over distinct physical servers for stability (the scenario's MTBF target), a warm
# tier of >= 10 GB/s and a 1 PiB cold bucket with lifecycle transitions, GPU utilisation alerts
# below 70%, idle jobs reclaimed after 72 h. Every default can be overridden.

locals {
  scenario = "engineering_simulation"
  # The tier this scenario has no input for.
  hot_storage = null
}
