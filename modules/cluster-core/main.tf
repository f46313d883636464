# The Kubernetes part of a scenario cluster on an existing gpucluster_rdma_network: the cluster CA,
# a first control-plane node that runs kubeadm init behind an internal load balancer (and, for a
# control plane of 3 or 5, a pool of the others that join it), GPU worker pools that join it
# pinning the CA, the add-ons the first node applies, and the alert rules.
#
# Every pool renders the provider's own node bootstrap: labels and taints come from one place in
# the provider, so the pools' node_labels/node_taints (and this module's outputs) are what the
# kubelets register.

locals {
  # The kubeadm join token. Given, or derived: sha256 of the network id, the cluster name and a
  # salt, cut to kubeadm's shape (hex digits are within [a-z0-9]). Deterministic, so plans stay
  # stable without a random provider; secret only as far as the salt is. Changing it does not
  # replace nodes.
  token_seed = "${var.network_id}/${var.name}/${var.join_token_salt == null ? "" : var.join_token_salt}"
  join_token = sensitive(var.join_token != null ? var.join_token : join(".", [
    substr(sha256("token-id/${local.token_seed}"), 0, 6),
    substr(sha256("token-secret/${local.token_seed}"), 0, 16),
  ]))

  # With a seed the CA's key, its certificate key and the join token are derived from it and go to
  # the pools' write-only arguments only, from the ephemeral resource, never into state.
  seeded          = var.control_plane.enabled && var.ca_seed_version != null
  join_token_wo   = local.seeded ? ephemeral.gpucluster_cluster_ca.cluster[0].join_token : null
  join_token_kept = local.seeded ? null : local.join_token

  versions = { for k, v in var.software_versions : k => v if v != null }
  # The control plane's stable address: its internal load balancer's, not any one node's, so a
  # node replaced by a scale or a roll changes nothing the workers or kubeadm hold.
  api_endpoint = var.control_plane.enabled ? gpucluster_control_plane_endpoint.api[0].endpoint : var.control_plane.api_endpoint
  # The name kubeadm's controlPlaneEndpoint and every join use. Every node maps it in /etc/hosts:
  # workers to api_endpoint, control-plane nodes (which take it from load_balancer_id) to themselves
  # once they serve, since the load balancer gives no answer to its own backend servers.
  api_server_name = var.control_plane.enabled ? gpucluster_control_plane_endpoint.api[0].api_server_name : var.control_plane.api_server_name
  # The CA every join pins: the one made here, or the external control plane's.
  ca_cert_hash = var.control_plane.enabled ? gpucluster_cluster_ca.cluster[0].ca_cert_hash : var.ca_cert_hash

  # Every pool here runs the node bootstrap, which needs a route to the internet unless it takes
  # everything from inside the VPC: the in-VPC mirror (package_mirror = "alibaba_vpc") and a
  # registry's VPC endpoint (image_registry), the mainland defaults. data.gpucluster_node_bootstrap.nccl
  # renders a GPU worker's, the superset of the control plane's.
  internet_sources  = data.gpucluster_node_bootstrap.nccl.internet_sources
  needs_egress      = length(local.internet_sources) > 0
  no_egress_message = "The node bootstrap (package_mirror = ${var.package_mirror == null ? "the region's default" : "\"${var.package_mirror}\""}, image_registry = ${var.image_registry == null ? "the region's default" : "\"${var.image_registry}\""}) downloads from the internet: ${join("; ", local.internet_sources)}. But the network's egress.mode is \"none\" (network_egress_mode): every node's cloud-init would fail. Set egress = { mode = \"nat\" } on the gpucluster_rdma_network (or \"existing\" with a route of your own), or take everything from inside the VPC: package_mirror = \"alibaba_vpc\" and image_registry on a registry's VPC endpoint (registry-vpc.<region>.aliyuncs.com/<namespace>)."
}

# Warn (not fail) when the join token is predictable: fine for a test cluster, not for production.
check "join_token_secrecy" {
  assert {
    condition     = nonsensitive(var.join_token != null || var.join_token_salt != null) || local.seeded
    error_message = "Neither join_token nor join_token_salt is set: the derived kubeadm join token can be computed by anyone who knows the network id. Set join_token_salt (or join_token) from a secret store, or ca_seed and ca_seed_version."
  }
}

# The Cluster Autoscaler (autoscaling worker pools) takes its credentials from the RAM role of the
# control-plane node it runs on: without one it cannot call Auto Scaling and no pool scales.
check "cluster_autoscaler_credentials" {
  assert {
    condition     = !var.control_plane.enabled || var.control_plane.ram_role_name != null || alltrue([for p in var.worker_pools : p.autoscaling == null])
    error_message = "Autoscaling worker pools are sized by the Cluster Autoscaler on the control plane, which authenticates with the control-plane nodes' instance RAM role, but control_plane.ram_role_name is not set: set it to a role that trusts ecs.aliyuncs.com and may call ess:Describe*, ess:ModifyScalingGroup, ess:RemoveInstances, ess:DetachInstances, ess:ExecuteScalingRule, ess:CreateScalingRule, ess:ModifyScalingRule, ess:DeleteScalingRule and ecs:DescribeInstanceTypes (see the guide on autoscaling node pools)."
  }
}

# The internal load balancer in front of the API servers (TCP 6443, health-checked), with the
# security group rules that traffic needs. Its api_server_name is kubeadm's controlPlaneEndpoint,
# which the workers map to its address; the control-plane pool keeps its backends equal to its
# nodes.
resource "gpucluster_control_plane_endpoint" "api" {
  count = var.control_plane.enabled ? 1 : 0

  name       = "${var.name}-api"
  network_id = var.network_id
  tags       = var.tags
}

# The cluster CA, made before any node boots so that every join pins its hash; only the first
# control-plane node receives the key. Without ca_seed its private key and certificate key are
# sensitive in state; with it they are derived from the seed and stored nowhere.
resource "gpucluster_cluster_ca" "cluster" {
  count = var.control_plane.enabled ? 1 : 0

  seed_wo         = local.seeded ? var.ca_seed : null
  seed_wo_version = var.ca_seed_version
}

# The seeded CA's secrets for this run only (checked against the certificate above).
ephemeral "gpucluster_cluster_ca" "cluster" {
  count = local.seeded ? 1 : 0

  seed     = var.ca_seed
  cert_pem = gpucluster_cluster_ca.cluster[0].cert_pem
}

# The first control-plane node: kubeadm init --upload-certs with the CA above, the load balancer's
# API server name as controlPlaneEndpoint (mapped to itself), the Flannel CNI on control_plane.pod_subnet and the add-ons
# (kubernetes.addons) applied by a systemd unit once the API answers.
resource "gpucluster_node_pool" "control_plane" {
  count = var.control_plane.enabled ? 1 : 0

  name           = "${var.name}-cp"
  network_id     = var.network_id
  scenario       = var.scenario
  instance_type  = var.control_plane.instance_type
  size           = 1
  image_id       = local.control_plane_image
  ram_role_name  = var.control_plane.ram_role_name
  package_mirror = var.package_mirror
  tags           = var.tags
  bootstrap_bundle = local.bundle_on ? {
    bucket     = gpucluster_bootstrap_bucket.bundles[0].id
    key_prefix = local.bundle_prefix.control_plane
    # A node that replaces the first one joins the others (kubeadm-join.yaml) at any time after
    # kubeadm init, when the configured token has expired: it reads the stored token under the
    # control-plane-join prefix, which the control-plane role reads.
    join_token_key          = var.control_plane.size > 1 ? local.bundle_token_key.control_plane_join : null
    publish_join_token_keys = local.bundle_token_keys
    etcd_backup             = local.etcd_backup
  } : null

  kubernetes = {
    role               = "control_plane"
    control_plane_init = true
    # The control-plane certificates are in the cluster only while fewer control-plane nodes
    # are Ready than this (a control-plane join pending).
    control_plane_size = var.control_plane.size
    load_balancer_id   = gpucluster_control_plane_endpoint.api[0].load_balancer_id
    join_token         = local.join_token_kept
    join_token_wo      = local.join_token_wo
    pod_subnet         = var.control_plane.pod_subnet
    image_registry     = local.image_registry
    ca_cert_hash       = local.ca_cert_hash
    ca_cert_pem        = gpucluster_cluster_ca.cluster[0].cert_pem
    # Null with a seed; the _wo forms carry them then.
    ca_key_pem         = gpucluster_cluster_ca.cluster[0].private_key_pem
    ca_key_pem_wo      = local.seeded ? ephemeral.gpucluster_cluster_ca.cluster[0].private_key_pem : null
    certificate_key    = gpucluster_cluster_ca.cluster[0].certificate_key
    certificate_key_wo = local.seeded ? ephemeral.gpucluster_cluster_ca.cluster[0].certificate_key : null
    versions           = length(local.versions) == 0 ? null : local.versions
    addons             = local.addons
  }

  lifecycle {
    precondition {
      condition     = var.network_egress_mode != "none" || !local.needs_egress
      error_message = local.no_egress_message
    }
  }
}

# The other 2 or 4 control-plane nodes: kubeadm join --control-plane through the load balancer
# (they do not serve the API yet, so it hands them to the ones that do) with the certificate key
# (stacked etcd), then map the API server name to themselves. The two pools share the load
# balancer.
resource "gpucluster_node_pool" "control_plane_join" {
  count = var.control_plane.enabled && var.control_plane.size > 1 ? 1 : 0
  # After the first node's pool: a change to both (instance type, image, Kubernetes release) then
  # rolls the control plane one node at a time, the first node before the others, so no two etcd
  # members are replaced at once.
  depends_on = [gpucluster_node_pool.control_plane]

  name           = "${var.name}-cp-join"
  network_id     = var.network_id
  scenario       = var.scenario
  instance_type  = var.control_plane.instance_type
  size           = var.control_plane.size - 1
  image_id       = local.control_plane_image
  ram_role_name  = var.control_plane.ram_role_name
  package_mirror = var.package_mirror
  tags           = var.tags
  # One node at a time, each joined (a new etcd member) before the next goes.
  update_strategy = {
    max_unavailable = 1
    join_timeout    = var.join_timeout
    drain_timeout   = var.drain_timeout
  }
  bootstrap_bundle = local.bundle_on ? {
    bucket                  = gpucluster_bootstrap_bucket.bundles[0].id
    key_prefix              = local.bundle_prefix.control_plane_join
    join_token_key          = local.bundle_token_key.control_plane_join
    publish_join_token_keys = local.bundle_token_keys
    etcd_backup             = local.etcd_backup
  } : null

  kubernetes = {
    role               = "control_plane"
    control_plane_init = false
    control_plane_size = var.control_plane.size
    load_balancer_id   = gpucluster_control_plane_endpoint.api[0].load_balancer_id
    image_registry     = local.image_registry
    join_token         = local.join_token_kept
    join_token_wo      = local.join_token_wo
    ca_cert_hash       = local.ca_cert_hash
    certificate_key    = gpucluster_cluster_ca.cluster[0].certificate_key
    certificate_key_wo = local.seeded ? ephemeral.gpucluster_cluster_ca.cluster[0].certificate_key : null
    versions           = length(local.versions) == 0 ? null : local.versions
  }

  lifecycle {
    precondition {
      condition     = var.network_egress_mode != "none" || !local.needs_egress
      error_message = local.no_egress_message
    }
  }
}

# GPU workers, one pool per worker_pools entry. Turning node_local_disk on or off changes the
# pools' data_disks in place: the pool rolls its nodes max_unavailable at a time.
# The fixed GPU worker pools. The control plane's add-ons take nothing from them (their GPUs per
# node come from the inputs and the catalog at plan), so they can follow it: made after it (their
# acceptance gate runs on its node), and a Kubernetes release change rolls them after it, so no
# kubelet is newer than the API server.
resource "gpucluster_node_pool" "worker" {
  for_each   = local.fixed_worker_pools
  depends_on = [gpucluster_node_pool.control_plane, gpucluster_node_pool.control_plane_join]

  name                   = "${var.name}-${each.key}"
  network_id             = var.network_id
  scenario               = var.scenario
  gpu_model              = each.value.gpu_model
  gpus_per_node          = each.value.gpu_model == null ? null : each.value.gpus_per_node
  instance_type          = each.value.instance_type
  size                   = each.value.size
  min_size               = each.value.min_size
  spot                   = each.value.spot
  instance_type_fallback = each.value.instance_type_fallback
  zone_ids               = each.value.zone_ids
  image_id               = each.value.image_id != null ? each.value.image_id : try(gpucluster_node_image.worker[each.key].id, null)
  auto_release_after     = each.value.auto_release_after
  mounts                 = length(var.mounts) == 0 ? null : var.mounts
  package_mirror         = var.package_mirror
  tags                   = merge(var.tags, each.value.tags)
  # With the bootstrap bundle the workers fetch theirs with a role of their own.
  ram_role_name = local.bundle_on ? var.bootstrap_bundle.worker_ram_role_name : null
  bootstrap_bundle = local.bundle_on ? {
    bucket         = gpucluster_bootstrap_bucket.bundles[0].id
    key_prefix     = local.bundle_prefix.workers[each.key]
    join_token_key = var.control_plane.enabled ? local.bundle_token_key.workers : null
  } : null

  system_disk = {
    category          = each.value.system_disk.category
    performance_level = each.value.system_disk.performance_level
    size_gib          = each.value.system_disk.size_gib
  }
  data_disks = var.node_local_disk == null ? null : [{
    category          = var.node_local_disk.category
    performance_level = var.node_local_disk.performance_level
    size_gib          = var.node_local_disk.size_gib
  }]
  update_strategy = {
    max_unavailable = each.value.max_unavailable
    join_timeout    = var.join_timeout
    drain_timeout   = var.drain_timeout
  }
  # The control-plane pool by name: its add-ons are rendered from the autoscaling pools, so a
  # reference would tie them all together.
  acceptance = var.acceptance.enabled && var.control_plane.enabled ? {
    control_plane_pool = "${var.name}-cp"
    timeout            = var.acceptance.timeout
    max_replacements   = var.acceptance.max_replacements
  } : null
  kubernetes = {
    role                          = "gpu_worker"
    api_endpoint                  = local.api_endpoint
    api_server_name               = local.api_server_name
    image_registry                = local.image_registry
    join_token                    = local.join_token_kept
    join_token_wo                 = local.join_token_wo
    ca_cert_hash                  = local.ca_cert_hash
    insecure_skip_ca_verification = local.ca_cert_hash == null ? var.insecure_skip_ca_verification : null
    versions                      = length(local.versions) == 0 ? null : local.versions
    nccl_env                      = length(var.nccl_env) == 0 ? null : var.nccl_env
    labels                        = length(each.value.labels) == 0 ? null : each.value.labels
    taints                        = [for t in each.value.taints : t.value == "" ? "${t.key}:${t.effect}" : "${t.key}=${t.value}:${t.effect}"]
  }

  lifecycle {
    precondition {
      condition     = var.network_egress_mode != "none" || !local.needs_egress
      error_message = local.no_egress_message
    }
  }
}

# The autoscaling GPU worker pools: the control plane's add-ons hold their scaling groups (the
# Cluster Autoscaler's node groups), so they are made before it, and a Kubernetes release change
# is applied to the control plane first with -target (the Kubernetes upgrades guide). Never gated:
# ESS makes and removes their nodes after the apply.
resource "gpucluster_node_pool" "worker_autoscaling" {
  for_each = local.autoscaling_worker_pools

  name                   = "${var.name}-${each.key}"
  network_id             = var.network_id
  scenario               = var.scenario
  gpu_model              = each.value.gpu_model
  gpus_per_node          = each.value.gpu_model == null ? null : each.value.gpus_per_node
  instance_type          = each.value.instance_type
  autoscaling            = each.value.autoscaling
  spot                   = each.value.spot
  instance_type_fallback = each.value.instance_type_fallback
  zone_ids               = each.value.zone_ids
  image_id               = each.value.image_id != null ? each.value.image_id : try(gpucluster_node_image.worker[each.key].id, null)
  auto_release_after     = each.value.auto_release_after
  mounts                 = length(var.mounts) == 0 ? null : var.mounts
  package_mirror         = var.package_mirror
  tags                   = merge(var.tags, each.value.tags)
  # With the bootstrap bundle the workers fetch theirs with a role of their own.
  ram_role_name = local.bundle_on ? var.bootstrap_bundle.worker_ram_role_name : null
  bootstrap_bundle = local.bundle_on ? {
    bucket         = gpucluster_bootstrap_bucket.bundles[0].id
    key_prefix     = local.bundle_prefix.workers[each.key]
    join_token_key = var.control_plane.enabled ? local.bundle_token_key.workers : null
  } : null

  system_disk = {
    category          = each.value.system_disk.category
    performance_level = each.value.system_disk.performance_level
    size_gib          = each.value.system_disk.size_gib
  }
  data_disks = var.node_local_disk == null ? null : [{
    category          = var.node_local_disk.category
    performance_level = var.node_local_disk.performance_level
    size_gib          = var.node_local_disk.size_gib
  }]
  update_strategy = {
    max_unavailable = each.value.max_unavailable
    join_timeout    = var.join_timeout
    drain_timeout   = var.drain_timeout
  }
  kubernetes = {
    role                          = "gpu_worker"
    api_endpoint                  = local.api_endpoint
    api_server_name               = local.api_server_name
    image_registry                = local.image_registry
    join_token                    = local.join_token_kept
    join_token_wo                 = local.join_token_wo
    ca_cert_hash                  = local.ca_cert_hash
    insecure_skip_ca_verification = local.ca_cert_hash == null ? var.insecure_skip_ca_verification : null
    versions                      = length(local.versions) == 0 ? null : local.versions
    nccl_env                      = length(var.nccl_env) == 0 ? null : var.nccl_env
    labels                        = length(each.value.labels) == 0 ? null : each.value.labels
    taints                        = [for t in each.value.taints : t.value == "" ? "${t.key}:${t.effect}" : "${t.key}=${t.value}:${t.effect}"]
  }

  lifecycle {
    precondition {
      condition     = var.network_egress_mode != "none" || !local.needs_egress
      error_message = local.no_egress_message
    }
  }
}

# The GPU workers' NCCL environment as their bootstrap writes it (the network's defaults for the
# erdma setting with nccl_env over them), for the nccl_env output: rendered offline, applied to
# nothing.
data "gpucluster_node_bootstrap" "nccl" {
  role           = "gpu_worker"
  erdma          = var.erdma
  nccl_env       = length(var.nccl_env) == 0 ? null : var.nccl_env
  package_mirror = var.package_mirror # for internet_sources (the egress check)
  kubernetes = {
    # The one place image_registry is resolved (null: the region's default, with its warning); the
    # pools and the manifests take the result, so a plan warns once.
    image_registry = var.image_registry
    # Placeholders: this document joins nothing. All known at plan (the cluster's own token is not
    # until the CA exists), so image_registry resolves at plan and what depends on it (the MPI
    # team quota check among them) is checked before anything is created.
    api_endpoint = "127.0.0.1:6443"
    join_token   = "abcdef.0123456789abcdef"
    ca_cert_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
  }
}

# Pools with node_local_disk used to have a resource of their own; states at that address move
# here without replacing a node.
moved {
  from = gpucluster_node_pool.worker_local_disk
  to   = gpucluster_node_pool.worker
}

locals {
  # Chosen by the input, so which pools autoscale is known at plan.
  fixed_worker_pools       = { for k, p in var.worker_pools : k => p if p.autoscaling == null }
  autoscaling_worker_pools = { for k, p in var.worker_pools : k => p if p.autoscaling != null }
  workers                  = merge(gpucluster_node_pool.worker, gpucluster_node_pool.worker_autoscaling)
  autoscaling_workers      = gpucluster_node_pool.worker_autoscaling
  pools                    = concat(gpucluster_node_pool.control_plane, gpucluster_node_pool.control_plane_join, values(local.workers))
  # Each pool's hourly price at its largest: a fixed pool's is its price; an autoscaling pool's is
  # its price per node at the last apply x max_size, null while it has no node to price one by.
  pools_at_max_size = merge(
    { for i, p in concat(gpucluster_node_pool.control_plane, gpucluster_node_pool.control_plane_join) : "control-plane-${i}" => p.estimated_hourly_price },
    { for k, p in local.workers : k => var.worker_pools[k].autoscaling == null ? p.estimated_hourly_price : (
      length(p.nodes) == 0 ? null : p.estimated_hourly_price / length(p.nodes) * var.worker_pools[k].autoscaling.max_size
    ) },
  )
  at_max_size_known = alltrue([for k, p in local.pools_at_max_size : p != null])
  # image_registry as resolved for the provider's region (see data.gpucluster_node_bootstrap.nccl).
  image_registry = data.gpucluster_node_bootstrap.nccl.kubernetes.image_registry
  # What the first control-plane node applies once the API answers, file by file in name order:
  # namespaces, device plugin, dcgm-exporter, the monitoring stack, the idle reaper, the workload
  # templates (gpucluster_kubernetes_manifests.addons).
  addons = data.gpucluster_kubernetes_manifests.cluster.addons
}

# Why the catalog chose each pool's type: the ranking the pool itself uses.
data "gpucluster_scenario" "worker" {
  for_each = { for k, p in var.worker_pools : k => p if p.gpu_model != null }

  name          = var.scenario
  gpu_model     = each.value.gpu_model
  gpus_per_node = each.value.gpus_per_node
  erdma         = var.erdma
  node_count    = each.value.size != null ? each.value.size : each.value.autoscaling.max_size
}

# GPUs per instance type, to size pinned-type pools for the queues.
data "gpucluster_gpu_catalog" "pools" {}

locals {
  # The worker pools by the name their nodes carry in the gpucluster.io/pool label, sized from the
  # inputs rather than from the pools' gpu_count, which is unknown until the nodes exist: so team
  # quotas that do not fit fail the plan, before anything is created. An autoscaling pool's quota
  # may use the GPUs of every node it can grow to.
  pool_type_gpus = { for t in data.gpucluster_gpu_catalog.pools.instance_types : t.name => t.gpus }
  mpi_pools = { for k, p in var.worker_pools : "${var.name}-${k}" => {
    node_count    = p.size != null ? p.size : p.autoscaling.max_size
    gpus_per_node = p.instance_type != null ? try(local.pool_type_gpus[p.instance_type], null) : p.gpus_per_node
  } }
}

data "gpucluster_kubernetes_manifests" "cluster" {
  scenario = var.scenario
  # An autoscaling pool counts at min_size (at least one node): the validation jobs run one pod
  # per node of what is there when they start.
  node_count = sum([for p in var.worker_pools : p.size != null ? p.size : max(p.autoscaling.min_size, 1)])
  # GPUs per node of the pools' types as the catalog picks them at plan (a pinned type's own), not
  # from the pools: the fixed pools are made beside the control plane, not before it.
  gpus_per_node = max(concat([1], [for k, p in var.worker_pools : coalesce(try(local.pool_type_gpus[
    p.instance_type != null ? p.instance_type : data.gpucluster_scenario.worker[k].candidates[0].instance_type
  ], null), p.gpus_per_node, 1)])...)
  erdma       = var.erdma
  nccl_env    = length(var.nccl_env) == 0 ? null : var.nccl_env
  max_runtime = var.idle_reclaim_after
  hpa         = var.hpa
  # One registry for every image: the add-ons here, kubeadm, containerd and the CNI in the pools.
  image_registry = local.image_registry

  addons_validation = var.validation_jobs
  # The MPI Operator with its CRD: in the bundle only (var.mpi_operator's validation).
  addons_mpi_operator = var.mpi_operator
  # The GPU health agent: in the bundle only, so off without one (see var.gpu_health_agent).
  addons_gpu_health_agent = var.gpu_health_agent && var.bootstrap_bundle.enabled
  # Kueue and the team queues, on the pools by the names their nodes carry: the pool names are
  # this module's own, so the teams come in by worker_pools key and no caller passes names back.
  addons_kueue = var.kueue != null
  mpi = var.kueue == null ? null : {
    pools = local.mpi_pools
    teams = length(var.kueue.teams) == 0 ? null : { for k, t in var.kueue.teams : k => {
      gpus      = t.gpus
      namespace = t.namespace
      pool      = t.pool == null ? null : "${var.name}-${t.pool}"
    } }
  }

  # The Cluster Autoscaler of the autoscaling pools, in the add-ons the first control-plane node
  # applies (35-cluster-autoscaler.yaml). It authenticates with the control-plane nodes' RAM role.
  cluster_autoscaler = length(local.autoscaling_workers) == 0 ? null : {
    node_groups = [for k, p in local.autoscaling_workers : {
      name             = p.name
      scaling_group_id = p.scaling_group_id
      min_size         = p.autoscaling.min_size
      max_size         = p.autoscaling.max_size
    }]
  }
}

data "gpucluster_alert_rules" "cluster" {
  scenario              = var.scenario
  design_bandwidth_gbps = var.monitoring.design_bandwidth_gbps
  network_interface     = var.monitoring.network_interface
}
