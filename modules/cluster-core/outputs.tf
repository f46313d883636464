output "control_plane" {
  description = "The control plane: the first pool's id (kubeadm init), the joining pool's id (null for a control plane of 1), instance type, every control-plane node (first node first), its load balancer (id, address), the API endpoint workers join (api_endpoint, the load balancer's address:6443, which a kubeconfig off the nodes uses) and the API server name kubeadm's controlPlaneEndpoint and every join use (api_server_name, resolved only on the nodes), and the CA hash every join pins; pool and load balancer fields are null when the control plane is external."
  value = {
    pool_id          = try(gpucluster_node_pool.control_plane[0].id, null)
    join_pool_id     = try(gpucluster_node_pool.control_plane_join[0].id, null)
    instance_type    = try(gpucluster_node_pool.control_plane[0].instance_type, null)
    nodes            = concat(try(gpucluster_node_pool.control_plane[0].nodes, []), try(gpucluster_node_pool.control_plane_join[0].nodes, []))
    ca_cert_hash     = local.ca_cert_hash
    load_balancer_id = try(gpucluster_control_plane_endpoint.api[0].load_balancer_id, null)
    address          = try(gpucluster_control_plane_endpoint.api[0].address, null)
    api_endpoint     = local.api_endpoint
    api_server_name  = local.api_server_name
  }
}

output "worker_pools" {
  description = "Each GPU worker pool, keyed as in worker_pools: id, instance type, GPU count, node labels and taints (exactly what the nodes' kubelets register), price per hour, for an autoscaling pool its scaling group id and bounds, and for a gated pool what the acceptance gate measured (acceptance_results: passed, per node DCGM and busbw against its floor, across the pool the all-reduce and the parallel efficiency)."
  value = { for k, p in local.workers : k => {
    id                     = p.id
    name                   = p.name
    instance_type          = p.instance_type
    gpu_count              = p.gpu_count
    node_labels            = p.node_labels
    node_taints            = p.node_taints
    estimated_hourly_price = p.estimated_hourly_price
    # Autoscaling pools: the Auto Scaling group and its bounds; null for fixed pools.
    scaling_group_id = p.scaling_group_id
    autoscaling      = p.autoscaling
    # The acceptance gate's last results; null for a pool it does not gate.
    acceptance_results = p.acceptance_results
  } }
}

output "addon_files" {
  description = "The add-on files the first control-plane node applies, in apply (name) order: 00-namespaces.yaml ... and, with mpi_operator, 60-mpi-operator.yaml, with kueue, 65-kueue.yaml."
  value       = sort(keys(local.addons))
}

output "mpi_pools" {
  description = "Each worker pool by the name its nodes carry in the gpucluster.io/pool label: node_count (size, or autoscaling.max_size) and gpus_per_node, from the inputs, so known at plan. The pools gpucluster_kubernetes_manifests mpi takes, and those the kueue queues are on."
  value       = local.mpi_pools
}

output "scaling_group_ids" {
  description = "The Auto Scaling group id of each autoscaling worker pool, keyed as in worker_pools: the Cluster Autoscaler's node groups."
  value       = { for k, p in local.autoscaling_workers : k => p.scaling_group_id }
}

output "cluster_autoscaler_yaml" {
  description = "The Cluster Autoscaler the first control-plane node applies (also in manifests' addons): every autoscaling pool's --nodes=min:max:<scaling group id>. Null without autoscaling pools."
  value       = try(data.gpucluster_kubernetes_manifests.cluster.cluster_autoscaler.yaml, null)
}

output "instance_types" {
  description = "Instance type of each worker pool."
  value       = { for k, p in local.workers : k => p.instance_type }
}

output "instance_type_reasons" {
  description = "Why the catalog ranks each worker pool's instance type where it does (from gpucluster_scenario); a pinned type says so."
  value = { for k, p in local.workers : k => (
    contains(keys(data.gpucluster_scenario.worker), k)
    ? flatten([for c in data.gpucluster_scenario.worker[k].candidates : c.reasons if c.instance_type == p.instance_type])
    : ["pinned by the caller (instance_type = \"${p.instance_type}\"); see findings for how it meets the scenario"]
  ) }
}

output "nodes" {
  description = "Every node of the cluster: role, pool, instance id, zone, private IP, status and instance type."
  value = concat(
    flatten([for p in concat(gpucluster_node_pool.control_plane, gpucluster_node_pool.control_plane_join) : [for n in p.nodes : {
      role = "control_plane", pool = p.name
      id   = n.id, zone_id = n.zone_id, private_ip = n.private_ip, status = n.status, instance_type = n.instance_type
    }]]),
    flatten([for k, p in local.workers : [for n in p.nodes : {
      role = "gpu_worker", pool = p.name
      id   = n.id, zone_id = n.zone_id, private_ip = n.private_ip, status = n.status, instance_type = n.instance_type
    }]]),
  )
}

output "findings" {
  description = "The catalog's findings on every pool against the scenario (warnings and info; errors stop the plan), with the pool they concern."
  value = flatten([
    for p in local.pools : [
      for f in p.findings : {
        pool     = p.name
        severity = f.severity
        code     = f.code
        message  = f.message
        hint     = f.hint
      }
    ]
  ])
}

output "estimated_hourly_price" {
  description = "Price of every pool together per hour, from ECS DescribePrice (the emulator's figures are illustrative)."
  value       = sum([for p in local.pools : p.estimated_hourly_price])
}

output "estimated_hourly_price_at_max_size" {
  description = "Price of every pool together per hour with each autoscaling pool at its max_size: its price per node at the last apply x max_size. Null while an autoscaling pool has no node to price one by (its own autoscaling.max_hourly_price still bounds it)."
  value       = local.at_max_size_known ? sum([for k, p in local.pools_at_max_size : p]) : null
}

output "gpu_count" {
  description = "GPUs in the cluster."
  value       = sum([for p in local.workers : p.gpu_count])
}

output "nccl_env" {
  description = "NCCL environment of the GPU workers and their jobs: the network's defaults with nccl_env applied."
  value       = data.gpucluster_node_bootstrap.nccl.nccl_env
}

output "manifests_yaml" {
  description = "Kubernetes manifests for the cluster as one multi-document YAML stream (device plugin, dcgm-exporter, training template, idle reaper, validation jobs). The first control-plane node applies the cluster's add-ons itself once the API answers (and after every boot)."
  value       = data.gpucluster_kubernetes_manifests.cluster.yaml
}

output "images" {
  description = "Every image the cluster runs, for a registry sync: name, upstream (registry/repository), tag, digest (empty where none is published yet), digest_source, and reference, the name the cluster pulls (in image_registry). kubeadm's control-plane images are not listed: `kubeadm config images list` prints them."
  value       = data.gpucluster_kubernetes_manifests.cluster.pinned_images
}

output "image_registry" {
  description = "The registry the cluster pulls every image from (image_registry, or the region's default); empty for the public registries."
  value       = data.gpucluster_kubernetes_manifests.cluster.image_registry
}

output "manifests" {
  description = "The same manifests one object at a time: kind, namespace, name and YAML."
  value = [for d in data.gpucluster_kubernetes_manifests.cluster.documents : {
    kind      = d.kind
    namespace = d.namespace
    name      = d.name
    yaml      = d.yaml
  }]
}

output "alert_rules_yaml" {
  description = "Prometheus rule file for the scenario (passes promtool check rules)."
  value       = data.gpucluster_alert_rules.cluster.rules_yaml
}

output "alert_rules" {
  description = "Alert names and the thresholds they use."
  value = {
    names      = data.gpucluster_alert_rules.cluster.alert_names
    thresholds = data.gpucluster_alert_rules.cluster.thresholds
  }
}

output "alertmanager_yaml" {
  description = "Alertmanager routing example for the alert rules; replace the webhook URLs."
  value       = data.gpucluster_alert_rules.cluster.alertmanager_yaml
}

output "grafana_dashboard" {
  description = "Grafana dashboard JSON for the cluster."
  value       = data.gpucluster_alert_rules.cluster.grafana_dashboard
}

output "join_token" {
  description = "The kubeadm join token the nodes use (sensitive), for joining nodes built outside this module. Null with ca_seed: open the gpucluster_cluster_ca ephemeral resource with the seed for it."
  value       = local.join_token_kept
  sensitive   = true
}

output "control_plane_image" {
  description = "The image the control-plane nodes boot from: id, name, content_digest and builder_instance_type of the gpucluster_node_image baked for them (node_image.bake), or only the id when control_plane.image_id is set; null without a control plane of this module's."
  value = !var.control_plane.enabled ? null : local.bake_control_plane ? {
    id                    = gpucluster_node_image.control_plane[0].id
    name                  = gpucluster_node_image.control_plane[0].name
    content_digest        = gpucluster_node_image.control_plane[0].content_digest
    builder_instance_type = gpucluster_node_image.control_plane[0].builder_instance_type
    } : {
    id = local.control_plane_image, name = null, content_digest = null, builder_instance_type = null
  }
}

output "node_images" {
  description = "The GPU node images the worker pools boot from, by pool key (node_image.bake): id, name, content_digest (what it holds), builder_instance_type and nvswitch. Empty with bake = false or where a pool sets its own image_id."
  value = { for k, i in gpucluster_node_image.worker : k => {
    id                    = i.id
    name                  = i.name
    content_digest        = i.content_digest
    builder_instance_type = i.builder_instance_type
    nvswitch              = i.nvswitch
  } }
}

output "preflight_summary" {
  description = "What the cluster takes of each quota checked at plan, what was not checked, and the API calls and time the create takes at the provider's rate limit (gpucluster_preflight). Null with preflight = false."
  value       = try(data.gpucluster_preflight.stack[0].summary, null)
}

output "bootstrap_bundle" {
  description = "With bootstrap_bundle.enabled: the bucket the pools' bootstrap bundles are in, its readers (key prefix and RAM role) and its policy document; null otherwise."
  value = local.bundle_on ? {
    bucket  = gpucluster_bootstrap_bucket.bundles[0].id
    readers = gpucluster_bootstrap_bucket.bundles[0].readers
    policy  = gpucluster_bootstrap_bucket.bundles[0].policy
  } : null
}
