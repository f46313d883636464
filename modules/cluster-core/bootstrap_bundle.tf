# The bootstrap bundle (bootstrap_bundle.enabled): every pool's node bootstrap (scripts, kubeadm
# configuration, join token, and on the first control-plane node the CA key and certificate key)
# goes to one private, KMS-encrypted bucket instead of the user data, which holds only the stub
# that fetches it with the node's instance RAM role. Each pool has its own prefix, and the
# bucket policy lets the control-plane role read only the control plane's prefixes and the
# workers' role only the workers': a worker, or a pod on one that reaches the metadata service,
# cannot read the bundle that holds the CA key.

locals {
  bundle_on     = var.bootstrap_bundle.enabled
  bundle_root   = "gpucluster-bundles/${var.name}"
  bundle_bucket = var.bootstrap_bundle.bucket_name != null ? var.bootstrap_bundle.bucket_name : "${lower(var.name)}-bundles-${substr(sha1(var.network_id), 0, 8)}"
  bundle_prefix = {
    control_plane      = "${local.bundle_root}/control-plane"
    control_plane_join = "${local.bundle_root}/control-plane-join"
    workers            = { for k, _ in var.worker_pools : k => "${local.bundle_root}/workers/${k}" }
  }
  bundle_cp_readers = var.control_plane.enabled ? concat(
    [{ key_prefix = local.bundle_prefix.control_plane, ram_role_name = var.control_plane.ram_role_name }],
    var.control_plane.size > 1 ? [{ key_prefix = local.bundle_prefix.control_plane_join, ram_role_name = var.control_plane.ram_role_name }] : [],
  ) : []
  bundle_worker_readers = [for k, p in local.bundle_prefix.workers : { key_prefix = p, ram_role_name = var.bootstrap_bundle.worker_ram_role_name }]
}

resource "gpucluster_bootstrap_bucket" "bundles" {
  count = local.bundle_on ? 1 : 0

  name    = local.bundle_bucket
  readers = concat(local.bundle_cp_readers, local.bundle_worker_readers)
}
