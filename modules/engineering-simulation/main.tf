# A GPU cluster for engineering simulation (CFD / FEA), end to end: a network whose nodes are spread
# over distinct physical servers, a warm tier and a cold bucket, a control plane, GPU worker pools
# that bootstrap themselves into Kubernetes, and the scenario's manifests and alert rules. The wiring
# is ../scenario-cluster; this module holds the scenario's defaults (variables.tf).
#
# The call of ../scenario-cluster and the inputs and outputs every scenario shares are linked in
# from ../scenario-cluster/shared (scenario_wiring.tf, common_variables.tf,
# pass_through_variables.tf, common_outputs.tf); what is this scenario's own is below and in
# variables.tf.

locals {
  scenario   = "engineering_simulation"
  zone_count = 2
  storage = {
    hot  = null
    warm = var.warm_storage
    cold = var.cold_storage
  }
}
