# Will the stack fit? At plan, before anything is created: the pools' vCPUs against the account's
# pay-as-you-go and spot quotas, each pool's instance type against the stock of its zones, its
# nodes against the free addresses of the network's vSwitches, and the API calls of the create.
# A stack that does not fit stops the plan here with each shortfall named (the postcondition);
# one that fits gives output.preflight_summary. Read at plan when network_id is known (a network
# made in an earlier run); with a network made in the same run it is read at apply.

locals {
  # The scenario's candidates of each pool whose type the catalog picks, best first.
  preflight_candidates = { for k, d in data.gpucluster_scenario.worker : k => d.candidates[*].instance_type }
  # An autoscaling pool counts at min_size now and max_size for the quotas; a pool whose type
  # the catalog picks takes the scenario's first candidate, as the pool itself does, and with
  # instance_type_fallback may fall back to the next ones (a scaling configuration lists at most
  # 10 types in all), whose stock counts too.
  preflight_workers = [for k, p in var.worker_pools : {
    name          = k
    instance_type = p.instance_type != null ? p.instance_type : try(local.preflight_candidates[k][0], null)
    fallback_instance_types = (p.instance_type == null && p.instance_type_fallback && length(lookup(local.preflight_candidates, k, [])) > 1
      ? slice(local.preflight_candidates[k], 1, p.autoscaling == null ? length(local.preflight_candidates[k]) : min(10, length(local.preflight_candidates[k])))
    : null)
    size               = coalesce(p.size, try(p.autoscaling.min_size, null), 0)
    max_size           = p.autoscaling == null ? null : max(p.autoscaling.max_size, coalesce(p.size, p.autoscaling.min_size, 0))
    spot               = p.spot != null
    zone_ids           = p.zone_ids
    network_id         = var.network_id
    vswitch_ids        = null
    addresses_per_node = null
  }]
  preflight_control_plane = var.control_plane.enabled ? [{
    name                    = "control_plane"
    instance_type           = var.control_plane.instance_type
    fallback_instance_types = null
    size                    = var.control_plane.size
    max_size                = null
    spot                    = false
    zone_ids                = null
    network_id              = var.network_id
    vswitch_ids             = null
    addresses_per_node      = null
  }] : []
  preflight_pools = [for p in concat(local.preflight_control_plane, local.preflight_workers) : p if p.instance_type != null]
}

data "gpucluster_preflight" "stack" {
  count = var.preflight && length(local.preflight_pools) > 0 ? 1 : 0

  pools                  = local.preflight_pools
  load_balancers         = var.control_plane.enabled ? 1 : 0
  load_balancer_backends = var.control_plane.enabled ? var.control_plane.size : 0
  # Shortfalls come back as data, so that the postcondition below stops the plan naming this
  # module's pools.
  enforce = false

  lifecycle {
    postcondition {
      condition     = self.fits
      error_message = "The cluster does not fit the account, the zones or the network (${self.summary}):\n- ${join("\n- ", self.shortfalls)}\nSet preflight = false to plan anyway."
    }
  }
}
