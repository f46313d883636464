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
    workers_join_token = "${local.bundle_root}/workers-join-token"
  }
  bundle_cp_readers = var.control_plane.enabled ? concat(
    [{ key_prefix = local.bundle_prefix.control_plane, ram_role_name = var.control_plane.ram_role_name }],
    var.control_plane.size > 1 ? [{ key_prefix = local.bundle_prefix.control_plane_join, ram_role_name = var.control_plane.ram_role_name }] : [],
  ) : []
  bundle_worker_readers = concat(
    [for k, p in local.bundle_prefix.workers : { key_prefix = p, ram_role_name = var.bootstrap_bundle.worker_ram_role_name }],
    var.control_plane.enabled ? [{ key_prefix = local.bundle_prefix.workers_join_token, ram_role_name = var.bootstrap_bundle.worker_ram_role_name }] : [],
  )

  # Join tokens expire 24 h after they are made (a reader's grant covers <prefix>/*, so each key
  # lies under a prefix its readers have). Every control-plane node stores a fresh one
  # every 8 h at these keys with its role (the bucket's writers, exact keys only), and the joining
  # pools read theirs right before kubeadm join: the workers' key is readable by the workers'
  # role alone, the control-plane joiners' key lies under their own prefix. So a node that joins
  # a week after the cluster formed (an autoscaled worker, a replaced control-plane node) joins.
  bundle_token_key = {
    workers            = "${local.bundle_prefix.workers_join_token}/token"
    control_plane_join = "${local.bundle_prefix.control_plane_join}/join-token"
  }
  bundle_token_keys = var.control_plane.enabled ? concat(
    [local.bundle_token_key.workers],
    var.control_plane.size > 1 ? [local.bundle_token_key.control_plane_join] : [],
  ) : []

  # etcd snapshots (etcd_backup): every control-plane node stores one every etcd_backup.every
  # under this prefix with its role, outside every bundle prefix (the writer's grant covers the
  # prefix, and no reader reads it: a snapshot holds every Secret of the cluster); the bucket's
  # lifecycle deletes them after etcd_backup.retention_days.
  etcd_backup_on     = local.bundle_on && var.control_plane.enabled && var.etcd_backup.enabled
  etcd_backup_prefix = "etcd-snapshots/${var.name}"
  etcd_backup = local.etcd_backup_on ? {
    key_prefix = local.etcd_backup_prefix
    every      = var.etcd_backup.every
  } : null
}

resource "gpucluster_bootstrap_bucket" "bundles" {
  count = local.bundle_on ? 1 : 0

  name    = local.bundle_bucket
  readers = concat(local.bundle_cp_readers, local.bundle_worker_readers)
  writers = concat(
    [for k in local.bundle_token_keys : { key = k, ram_role_name = var.control_plane.ram_role_name }],
    local.etcd_backup_on ? [{ key = "${local.etcd_backup_prefix}/*", ram_role_name = var.control_plane.ram_role_name }] : [],
  )
  expirations = local.etcd_backup_on ? [{ key_prefix = local.etcd_backup_prefix, days = var.etcd_backup.retention_days }] : []
}
