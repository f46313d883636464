# A GPU cluster for molecular dynamics, end to end: an eRDMA network in low-latency placement groups
# for MPI, a hot tier with node-local flash and a warm tier, a control plane, GPU worker pools that
# bootstrap themselves into Kubernetes, and the scenario's manifests and alert rules. The wiring is
# ../scenario-cluster; this module names its scenario.
#
# The call of ../scenario-cluster and the inputs and outputs every scenario shares are linked in
# from ../scenario-cluster/shared (scenario_wiring.tf, scenario_defaults.tf, scenario_inputs.tf, the storage tiers'
# *_storage_input.tf, common_variables.tf, pass_through_variables.tf, common_outputs.tf); the
# scenario's defaults are its row in scenario_defaults.tf. What is this module's own is below.
#
# Defaults implement the molecular_dynamics scenario: GPUs with double precision and >= 1 TB/s
# memory bandwidth (A100 80 GB class: 9.7 TFLOPS FP64, 2 TB/s), 8 per node, MPI over eRDMA in
# low-latency placement groups (latency target <= 1 us), a hot tier with 1M IOPS node-local flash
# and a warm tier of >= 10 GB/s, GPU utilisation alerts below 70%, idle jobs reclaimed after 72 h.
# The scenario's recommended GPUs, A40 and A10, miss its own FP64 and bandwidth targets: set
# gpu_model = "A40" as a budget option and the findings say what falls short.

locals {
  scenario = "molecular_dynamics"
  # The tier this scenario has no input for.
  cold_storage = null
}
