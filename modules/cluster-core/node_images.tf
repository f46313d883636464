# Node images: one gpucluster_node_image per worker pool that has no image_id of its own
# (node_image.bake), baked with the settings the pool's bootstrap runs with, so that every install
# phase of the pool's nodes is held by the image and they only mount and join; and one for the
# control plane (both of its pools) unless control_plane.image_id is set, holding kubeadm's images
# too, so that its nodes only init or join. A setting that
# differs from the pool's would only cost boot time (the node runs that phase again), never a
# wrong node; the settings below are the pool's own to avoid that.

locals {
  baked_pools         = var.node_image.bake ? { for k, p in var.worker_pools : k => p if p.image_id == null } : {}
  bake_control_plane  = var.node_image.bake && var.control_plane.enabled && var.control_plane.image_id == null
  control_plane_image = var.control_plane.image_id != null ? var.control_plane.image_id : try(gpucluster_node_image.control_plane[0].id, null)

  # The pool's instance type as its plan picks it: pinned, or the scenario's first-ranked type for
  # its GPU model (the pool's own choice; a fallback at apply to another type still boots).
  baked_pool_types = { for k, p in local.baked_pools : k => (
    p.instance_type != null ? (startswith(p.instance_type, "ecs.") ? p.instance_type : "ecs.${p.instance_type}") :
    data.gpucluster_scenario.baked_pool[k].recommended_instance_type
  ) }

  # NFS mounts (NAS, CPFS) make the bootstrap install the NFS client; the image holds it too.
  nfs_mounts = anytrue([for m in var.mounts : can(regex("^\\S+\\s+\\S+\\s+nfs", m))])
}

data "gpucluster_scenario" "baked_pool" {
  for_each = { for k, p in local.baked_pools : k => p if p.instance_type == null }

  name          = var.scenario
  gpu_model     = each.value.gpu_model
  gpus_per_node = each.value.gpus_per_node
  node_count    = coalesce(each.value.size, try(each.value.autoscaling.max_size, null), 1)
  erdma         = var.erdma
}

data "gpucluster_gpu_catalog" "nvswitch" {
  count = length(local.baked_pools) == 0 ? 0 : 1
}

resource "gpucluster_node_image" "worker" {
  for_each = local.baked_pools

  name                  = "${var.name}-${each.key}"
  network_id            = var.network_id
  builder_instance_type = var.node_image.builder_instance_type
  # Fabric Manager for an NVSwitch pool: CUDA does not initialise there without it.
  nvswitch        = contains([for t in data.gpucluster_gpu_catalog.nvswitch[0].instance_types : t.name if t.nvswitch], local.baked_pool_types[each.key])
  erdma           = var.erdma
  nfs_client      = local.nfs_mounts
  versions        = length(local.versions) == 0 ? null : local.versions
  image_registry  = local.image_registry
  package_mirror  = var.package_mirror
  copy_to_regions = var.node_image.copy_to_regions
  tags            = var.tags

  lifecycle {
    # Baked before the old image goes: the pool rolls onto the new one in between, and the
    # vendor refuses to delete an image instances still run from.
    create_before_destroy = true

    precondition {
      condition     = var.network_egress_mode != "none" || !local.needs_egress
      error_message = local.no_egress_message
    }
  }
}

# The control plane's image: no GPU software (a CPU builder), the control-plane nodes' install
# phases and kubeadm's images from the cluster's image registry at the release they install.
resource "gpucluster_node_image" "control_plane" {
  count = local.bake_control_plane ? 1 : 0

  name            = "${var.name}-cp"
  role            = "control_plane"
  network_id      = var.network_id
  nfs_client      = false # the control-plane pools mount nothing
  versions        = length(local.versions) == 0 ? null : local.versions
  image_registry  = local.image_registry
  package_mirror  = var.package_mirror
  copy_to_regions = var.node_image.copy_to_regions
  tags            = var.tags

  lifecycle {
    create_before_destroy = true

    precondition {
      condition     = var.network_egress_mode != "none" || !local.needs_egress
      error_message = local.no_egress_message
    }
  }
}
