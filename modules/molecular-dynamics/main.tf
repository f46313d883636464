# A GPU cluster for molecular dynamics, end to end: an eRDMA network in low-latency placement groups
# for MPI, a hot tier with node-local flash and a warm tier, a control plane, GPU worker pools that
# bootstrap themselves into Kubernetes, and the scenario's manifests and alert rules. The wiring is
# ../scenario-cluster; this module holds the scenario's defaults (variables.tf).
#
# The call of ../scenario-cluster and the inputs and outputs every scenario shares are linked in
# from ../scenario-cluster/shared (scenario_wiring.tf, common_variables.tf,
# pass_through_variables.tf, common_outputs.tf); what is this scenario's own is below and in
# variables.tf.

locals {
  scenario   = "molecular_dynamics"
  zone_count = 1
  storage = {
    hot  = var.hot_storage
    warm = var.warm_storage
    cold = null
  }
}
