variable "name" {
  description = "Cluster name: prefixes the pools (<name>-cp, <name>-<pool key>). 2-40 characters, a letter first, then letters, digits and hyphens."
  type        = string

  validation {
    condition     = can(regex("^[a-zA-Z][a-zA-Z0-9-]{1,39}$", var.name))
    error_message = "name must be 2-40 characters: a letter first, then letters, digits and hyphens (for example \"llm-train\")."
  }
}

variable "scenario" {
  description = "Research scenario the cluster serves: ai_training, molecular_dynamics or engineering_simulation. It decides the catalog's checks, the alert thresholds and the manifests."
  type        = string

  validation {
    condition     = contains(["ai_training", "molecular_dynamics", "engineering_simulation"], var.scenario)
    error_message = "scenario must be one of ai_training, molecular_dynamics, engineering_simulation."
  }
}

variable "network_id" {
  description = "Id of the gpucluster_rdma_network every pool joins."
  type        = string
}

variable "erdma" {
  description = "Whether the network uses eRDMA: workers install the eRDMA driver, the catalog prefers types with elastic RDMA and jobs get the eRDMA NCCL environment. Must match the network's erdma."
  type        = bool
  default     = false
}

variable "nccl_env" {
  description = "NCCL variables that override the network's defaults on the GPU workers (/etc/nccl.conf) and in workload pods, such as { NCCL_DEBUG = \"INFO\" }."
  type        = map(string)
  default     = {}
}

variable "control_plane" {
  description = "The Kubernetes control plane: 1, 3 or 5 CPU nodes behind an internal load balancer whose address the workers join (enabled): the first runs kubeadm init, the others (a second pool) join it with stacked etcd. Or an existing API server the workers join (enabled = false with api_endpoint and ca_cert_hash, and api_server_name when that control plane sits behind a gpucluster_control_plane_endpoint: its api_server_name, which the workers map to api_endpoint's address). ram_role_name is the control-plane nodes' instance RAM role, which the Cluster Autoscaler of autoscaling worker pools authenticates with."
  type = object({
    enabled       = optional(bool, true)
    instance_type = optional(string, "ecs.g7.2xlarge")
    size          = optional(number, 1)
    image_id      = optional(string)
    pod_subnet    = optional(string, "10.244.0.0/16")
    api_endpoint  = optional(string)
    # An external control plane's API server name (gpucluster_control_plane_endpoint.api_server_name).
    api_server_name = optional(string)
    # The control-plane nodes' instance RAM role: the Cluster Autoscaler of the autoscaling
    # pools authenticates with it (no AccessKey in the cluster).
    ram_role_name = optional(string)
  })
  default  = {}
  nullable = false

  validation {
    condition     = contains([1, 3, 5], var.control_plane.size)
    error_message = "control_plane.size must be 1, 3 or 5: etcd needs a majority of an odd number of members to keep quorum, and more than 5 slow every write. 3 survives one node lost, 5 two."
  }
  validation {
    condition     = var.control_plane.enabled || var.control_plane.api_endpoint != null
    error_message = "With control_plane.enabled = false, set control_plane.api_endpoint to the host:port of the API server the workers join."
  }
  validation {
    condition     = var.control_plane.api_endpoint == null || can(regex("^[A-Za-z0-9.-]+:[0-9]{1,5}$", var.control_plane.api_endpoint))
    error_message = "control_plane.api_endpoint must be host:port, such as \"10.0.0.10:6443\" or \"k8s.example.org:6443\"."
  }
  validation {
    condition     = can(cidrhost(var.control_plane.pod_subnet, 0))
    error_message = "control_plane.pod_subnet must be a CIDR block such as \"10.244.0.0/16\", matching what your CNI expects."
  }
}

variable "worker_pools" {
  description = "GPU worker pools, keyed by a short name (the pool is <name>-<key>). Each sets exactly one of gpu_model (the catalog picks the type) or instance_type (pinned), and exactly one of size (a fixed pool) or autoscaling = { min_size, max_size, ... } (an Auto Scaling group the Cluster Autoscaler sizes); spot = { strategy } makes its nodes spot."
  type = map(object({
    size                   = optional(number)
    min_size               = optional(number)
    gpu_model              = optional(string)
    gpus_per_node          = optional(number)
    instance_type          = optional(string)
    instance_type_fallback = optional(bool, false)
    zone_ids               = optional(list(string))
    image_id               = optional(string)
    system_disk = optional(object({
      category          = string
      performance_level = optional(string)
      size_gib          = number
    }), { category = "cloud_essd", performance_level = "PL1", size_gib = 200 })
    max_unavailable    = optional(number, 1)
    auto_release_after = optional(string)
    labels             = optional(map(string), {})
    taints = optional(list(object({
      key    = string
      value  = optional(string, "")
      effect = string
    })), [])
    tags = optional(map(string), {})
    # Instead of size: an Auto Scaling group between min_size and max_size, sized by the Cluster
    # Autoscaler (gpucluster_node_pool autoscaling; the module renders the autoscaler).
    autoscaling = optional(object({
      min_size              = number
      max_size              = number
      on_demand_base        = optional(number)
      on_demand_percentage  = optional(number)
      fallback_to_on_demand = optional(bool)
      max_hourly_price      = optional(number)
    }))
    # Spot nodes (gpucluster_node_pool spot). On an autoscaling pool on_demand_base and
    # on_demand_percentage mix in pay-as-you-go nodes.
    spot = optional(object({
      strategy         = optional(string, "SpotAsPriceGo")
      max_hourly_price = optional(number)
    }))
  }))

  validation {
    condition     = length(var.worker_pools) >= 1
    error_message = "worker_pools needs at least one pool, such as { gpu = { size = 2, gpu_model = \"A100-80GB\" } }."
  }
  validation {
    condition     = alltrue([for k, p in var.worker_pools : can(regex("^[a-z][a-z0-9-]{0,15}$", k))])
    error_message = "worker_pools keys must be 1-16 lowercase letters, digits and hyphens starting with a letter (for example \"gpu\" or \"a100\"): they name the pools."
  }
  validation {
    condition     = alltrue([for p in var.worker_pools : (p.gpu_model == null) != (p.instance_type == null)])
    error_message = "Each worker pool sets exactly one of gpu_model (let the catalog choose the instance type) or instance_type (pin it)."
  }
  validation {
    condition     = alltrue([for p in var.worker_pools : (p.size == null) != (p.autoscaling == null)])
    error_message = "Each worker pool sets exactly one of size (a fixed pool, such as size = 4) or autoscaling (such as autoscaling = { min_size = 0, max_size = 50 })."
  }
  validation {
    condition     = alltrue([for p in var.worker_pools : p.size == null || (try(p.size >= 1, false) && (p.min_size == null ? true : p.min_size <= p.size))])
    error_message = "Each fixed worker pool needs size >= 1 and, when set, min_size <= size."
  }
  validation {
    condition     = alltrue([for p in var.worker_pools : p.autoscaling == null || (try(p.autoscaling.min_size >= 0 && p.autoscaling.max_size >= 1 && p.autoscaling.min_size <= p.autoscaling.max_size, false) && p.min_size == null)])
    error_message = "Each autoscaling worker pool needs 0 <= autoscaling.min_size <= autoscaling.max_size and max_size >= 1, such as { min_size = 0, max_size = 50 }; min_size outside autoscaling is for fixed pools only."
  }
  validation {
    condition     = alltrue(flatten([for p in var.worker_pools : [for t in p.taints : contains(["NoSchedule", "PreferNoSchedule", "NoExecute"], t.effect)]]))
    error_message = "Worker pool taints need effect NoSchedule, PreferNoSchedule or NoExecute."
  }
  validation {
    condition     = alltrue(flatten([for p in var.worker_pools : [for k in keys(p.labels) : !startswith(k, "gpucluster.io/") && !can(regex("(^|\\.)(kubernetes\\.io|k8s\\.io)/", k))]]))
    error_message = "Worker pool labels may not use the gpucluster.io/, kubernetes.io/ or k8s.io/ prefixes (the module and the kubelet set those). Use your own prefix, such as lab.example.org/team."
  }
}

variable "node_local_disk" {
  description = "One data disk on every GPU worker, such as the hot tier's node-local ESSD PL3 disk (storage-tiers' hot_data_disk). Null: no data disk."
  type = object({
    category          = string
    performance_level = optional(string)
    size_gib          = number
  })
  default = null
}

variable "mounts" {
  description = "/etc/fstab lines every GPU worker mounts at boot: the storage tiers' fstab_line values (NFS ones install nfs-common)."
  type        = list(string)
  default     = []
}

variable "software_versions" {
  description = "Software on the nodes; unset fields take the provider's defaults, which meet the scenarios' targets (driver >= 510.47.03, CUDA 11.8, NCCL >= 2.12, Kubernetes >= 1.24)."
  type = object({
    driver     = optional(string)
    cuda       = optional(string)
    nccl       = optional(string)
    kubernetes = optional(string)
  })
  default  = {}
  nullable = false
}

variable "join_token" {
  description = "kubeadm bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}. Null: derived from the network id, the cluster name and join_token_salt (see README)."
  type        = string
  default     = null
  sensitive   = true

  validation {
    condition     = var.join_token == null || can(regex("^[a-z0-9]{6}\\.[a-z0-9]{16}$", var.join_token))
    error_message = "join_token must be 6 then 16 lowercase letters or digits joined by a dot, such as abcdef.0123456789abcdef; generate one with `kubeadm token generate`."
  }
}

variable "join_token_salt" {
  description = "Secret mixed into the derived join token when join_token is null. Without it (and without join_token) anyone who knows the network id can compute the token: set one outside test clusters."
  type        = string
  default     = null
  sensitive   = true
}

variable "ca_seed" {
  description = "Optional: a secret of at least 32 characters (such as `openssl rand -hex 32`) the cluster CA's key, its certificate key and the join token are derived from, so that none of them is in any plan or state: they reach the nodes through write-only arguments only (OpenTofu and Terraform >= 1.11). Ephemeral: pass it from a secret store (TF_VAR_ca_seed), in every run. Set ca_seed_version with it. Null: the CA key is random and kept in state, marked sensitive, and the join token is join_token or derived from join_token_salt."
  type        = string
  default     = null
  sensitive   = true
  ephemeral   = true
}

variable "ca_seed_version" {
  description = "Set (to 1) together with ca_seed; change it whenever ca_seed changes, which replaces the CA and so every node. Write-only values leave no trace in state to compare, so this number is what tells a new seed from the old one. Null: no seed."
  type        = number
  default     = null
}

variable "ca_cert_hash" {
  description = "External control plane only (control_plane.enabled = false): sha256:<hex> of its CA, which the workers pin when they join. With the module's own control plane the CA is made here (gpucluster_cluster_ca) and this is ignored. Null with an external control plane is refused unless insecure_skip_ca_verification = true."
  type        = string
  default     = null

  validation {
    condition     = var.ca_cert_hash == null || can(regex("^sha256:[0-9a-f]{64}$", var.ca_cert_hash))
    error_message = "ca_cert_hash must be sha256: followed by 64 hex digits, as `kubeadm token create --print-join-command` prints it."
  }
}

variable "insecure_skip_ca_verification" {
  description = "External control plane without ca_cert_hash: let the workers join without pinning its CA (kubeadm's unsafeSkipCAVerification). A machine that impersonates the API endpoint could then take them over: use only for a throwaway test cluster."
  type        = bool
  default     = false
  nullable    = false
}

variable "idle_reclaim_after" {
  description = "How long an opted-in workload (label gpucluster.io/reap-after-max-runtime=true) may run before the reaper CronJob reclaims it. 72h by default, the scenarios' target."
  type        = string
  default     = "72h"

  validation {
    condition     = can(regex("^[0-9]+h([0-9]+m)?$", var.idle_reclaim_after))
    error_message = "idle_reclaim_after must be a duration in hours and minutes of at least 1h, such as \"72h\" or \"36h30m\"."
  }
}

variable "validation_jobs" {
  description = "Also apply the validation jobs with the add-ons once the API answers: nccl-tests on every GPU node, the cross-node all-reduce (one pod per GPU node, never two on one) and, in the simulation scenarios, HPCG. Off by default: they hold every GPU for minutes."
  type        = bool
  default     = false
  nullable    = false
}

variable "image_registry" {
  description = "Registry every container image of the cluster is pulled from, such as \"registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster\" (a Container Registry namespace through its VPC endpoint) or \"<instance>-registry-vpc.<region>.cr.aliyuncs.com/<namespace>\": kubeadm's imageRepository, containerd's pause image and registry mirrors, the CNI, every add-on and the validation and MPI jobs, each as <image_registry>/<last part of its name>:<tag>@<digest> (the images output lists them for your sync). Null: in mainland China regions (cn-* but cn-hongkong) registry-vpc.<region>.aliyuncs.com/gpucluster, which you create and fill (a plan warning says how); elsewhere the public registries. \"\" is the public registries in any region."
  type        = string
  default     = null

  validation {
    condition     = var.image_registry == null || var.image_registry == "" || can(regex("^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+$", var.image_registry))
    error_message = "image_registry is a registry prefix host[:port]/path without a scheme, such as registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster, or \"\" for the public registries."
  }
}

variable "monitoring" {
  description = "Alert rule settings. Thresholds come from the scenario (GPU utilisation below 85% for training, 70% for simulation; GPU memory 90% warning, 95% critical for 5 min; network bursts at 80% of design_bandwidth_gbps)."
  type = object({
    design_bandwidth_gbps = optional(number, 100)
    network_interface     = optional(string, "eth0")
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.monitoring.design_bandwidth_gbps >= 1
    error_message = "monitoring.design_bandwidth_gbps is the link speed bursts are measured against, in Gbit/s: at least 1 (the network plan's is 100)."
  }
}

variable "hpa" {
  description = "Autoscale an inference Deployment on its pods' GPU utilisation (prometheus-adapter). Null: no HPA."
  type = object({
    deployment              = string
    min_replicas            = number
    max_replicas            = number
    target_gpu_util_percent = optional(number)
  })
  default = null
}

variable "tags" {
  description = "Tags on every node. Keys starting with gpucluster: are reserved."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for k in keys(var.tags) : !startswith(k, "gpucluster:")])
    error_message = "Tag keys starting with gpucluster: are the provider's own; use another prefix."
  }
}

variable "network_egress_mode" {
  description = "egress.mode of the gpucluster_rdma_network of network_id (nat, none or existing), such as gpucluster_rdma_network.x.egress.mode. \"none\" is refused at plan when the node bootstrap still downloads from the internet (package_mirror = \"internet\", or image_registry not on a registry's VPC endpoint); with the mainland defaults (the in-VPC mirror and registry-vpc) it is not. Null: not checked."
  type        = string
  default     = null

  validation {
    condition     = var.network_egress_mode == null || contains(["nat", "none", "existing"], coalesce(var.network_egress_mode, "nat"))
    error_message = "network_egress_mode is the network's egress.mode: nat, none or existing."
  }
}

variable "package_mirror" {
  description = "Where the node bootstrap takes its packages from (and where nodes' pip looks): internet (the upstream sources) or alibaba_vpc (Alibaba Cloud's in-VPC mirror, mirrors.cloud.aliyuncs.com: Ubuntu with the NVIDIA driver and Fabric Manager, the Kubernetes packages, the NVIDIA container toolkit, PyPI). Unset (null), the region's default: alibaba_vpc in mainland China (cn-* but cn-hongkong), internet elsewhere. The images kubeadm pulls come from its image repository either way."
  type        = string
  default     = null

  validation {
    condition     = var.package_mirror == null || contains(["internet", "alibaba_vpc"], coalesce(var.package_mirror, "internet"))
    error_message = "package_mirror must be internet or alibaba_vpc (or null for the region's default)."
  }
}

variable "node_image" {
  description = "GPU node images: with bake = true (the default) every worker pool without an image_id of its own boots from a gpucluster_node_image baked for it (one per pool, named <name>-<pool key>, with the pool's software_versions, image_registry, package_mirror, erdma and NFS client, and Fabric Manager when the pool's instance type has NVSwitch), so its nodes only mount and join. A change of what goes into an image bakes a new one first (create_before_destroy), the pool rolls onto it max_unavailable nodes at a time, and the old image is deleted once no node runs it. The control plane, unless control_plane.image_id is set, boots from one more image (<name>-cp, role control_plane: the control-plane nodes' software and kubeadm's control-plane images at the release they install, baked on the catalog's smallest CPU type), so its nodes only init or join. bake = false: every pool boots from its image_id and installs at boot. builder_instance_type: the GPU images' builder type (null: the catalog's smallest GPU type that fits each image); copy_to_regions: regions each image is copied to."
  type = object({
    bake                  = optional(bool, true)
    builder_instance_type = optional(string)
    copy_to_regions       = optional(list(string))
  })
  default  = {}
  nullable = false
}

variable "preflight" {
  description = "Check at plan that the cluster fits the account's vCPU quotas, the stock of the pools' zones and the free addresses of the network's vSwitches (gpucluster_preflight), and stop the plan naming each shortfall. false: skip it (credentials without ecs:DescribeAccountAttributes, say)."
  type        = bool
  default     = true
  nullable    = false
}

variable "bootstrap_bundle" {
  description = "Takes every pool's node bootstrap out of its user data (enabled, the default): the module makes one gpucluster_bootstrap_bucket (bucket_name, default <name>-bundles-<8 hex digits of the network id>, lowercased; bucket names are global) and each pool uploads its bootstrap there, under gpucluster-bundles/<name>/control-plane, .../control-plane-join or .../workers/<pool key>, before any node boots; a node's user data is a stub of at most 4 KiB that fetches its bundle with the node's instance RAM role. The control-plane pools fetch with control_plane.ram_role_name, the worker pools with worker_ram_role_name, a different role: the bucket policy lets each role read only its own pools' prefixes, so a worker cannot read the first control-plane node's bundle, which holds the CA key. Neither role may have a RAM policy that reads every bucket. Turning it on or off rolls every pool's nodes."
  type = object({
    enabled              = optional(bool, true)
    bucket_name          = optional(string)
    worker_ram_role_name = optional(string)
  })
  default  = {}
  nullable = false

  validation {
    condition     = !var.bootstrap_bundle.enabled || !var.control_plane.enabled || var.control_plane.ram_role_name != null
    error_message = "control_plane.ram_role_name is not set, and bootstrap_bundle.enabled is true (the default): the control-plane nodes fetch their bootstrap bundle (which holds the CA key and the join token, kept out of the user data) from OSS with their instance RAM role, and this module cannot create RAM roles. Create a RAM role with the trust policy {\"Statement\":[{\"Action\":\"sts:AssumeRole\",\"Effect\":\"Allow\",\"Principal\":{\"Service\":[\"ecs.aliyuncs.com\"]}}],\"Version\":\"1\"} (ECS may assume it; a RAM policy that reads every bucket it must not have: the bucket policy grants it its prefixes) and set control_plane.ram_role_name to its name, or set bootstrap_bundle = { enabled = false } to put the bootstrap, secrets included, in the user data."
  }
  validation {
    condition     = !var.bootstrap_bundle.enabled || var.bootstrap_bundle.worker_ram_role_name != null
    error_message = "bootstrap_bundle.worker_ram_role_name is not set, and bootstrap_bundle.enabled is true (the default): the worker nodes fetch their bootstrap bundle (which holds the join token, kept out of the user data) from OSS with an instance RAM role of their own, and this module cannot create RAM roles. Create a second RAM role with the trust policy {\"Statement\":[{\"Action\":\"sts:AssumeRole\",\"Effect\":\"Allow\",\"Principal\":{\"Service\":[\"ecs.aliyuncs.com\"]}}],\"Version\":\"1\"} (not control_plane.ram_role_name; a RAM policy that reads every bucket it must not have) and set bootstrap_bundle.worker_ram_role_name to its name, or set bootstrap_bundle = { enabled = false } to put the bootstrap, secrets included, in the user data."
  }
  validation {
    condition     = !var.bootstrap_bundle.enabled || !var.control_plane.enabled || var.bootstrap_bundle.worker_ram_role_name != var.control_plane.ram_role_name
    error_message = "bootstrap_bundle.worker_ram_role_name is control_plane.ram_role_name: the workers could then read the first control-plane node's bundle, which holds the cluster CA key. Give the workers a role of their own."
  }
  validation {
    condition     = var.bootstrap_bundle.bucket_name == null || can(regex("^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", var.bootstrap_bundle.bucket_name))
    error_message = "bootstrap_bundle.bucket_name must be 3-63 lowercase letters, digits and hyphens, not starting or ending with a hyphen (an OSS bucket name)."
  }
}

variable "acceptance" {
  description = "The acceptance gate on every fixed GPU worker pool (gpucluster_node_pool acceptance): once a pool's nodes run, the module's first control-plane node checks each node (DCGM's level-2 diagnostic, nccl-tests over its GPUs) and the pool (an all-reduce across its nodes; HPCG's parallel efficiency in molecular dynamics and simulation), replaces a node that fails (at most max_replacements) and fails the apply naming the node, the check and the figure after that. Off by default here; the scenario modules turn it on. Only with the module's control plane (control_plane.enabled): an external one's pool is not the module's to find. See the guide \"GPU health\"."
  type = object({
    enabled          = optional(bool, false)
    timeout          = optional(string, "30m")
    max_replacements = optional(number, 2)
  })
  default  = {}
  nullable = false
}

variable "etcd_backup" {
  description = "etcd snapshots to the bootstrap bundle's bucket (needs bootstrap_bundle.enabled): every control-plane node runs a timer that saves a snapshot of its etcd member (etcdctl snapshot save in the etcd container) every `every` (whole minutes or hours, such as 6h or 90min) and stores it, KMS-encrypted, at etcd-snapshots/<name>/<UTC time>-<host name>.db with control_plane.ram_role_name; the bucket policy lets that role put under the prefix and nothing reads it but the account's own credentials. The bucket is versioned; a lifecycle rule deletes a snapshot retention_days (30 by default) after it was written, and an earlier version as long after it was replaced. Off by default: turning it on changes the control-plane bundles, which nodes created from then on fetch. The guide \"etcd backup and restore\" has the restore."
  type = object({
    enabled        = optional(bool, false)
    every          = optional(string, "6h")
    retention_days = optional(number, 30)
  })
  default  = {}
  nullable = false

  validation {
    condition     = !var.etcd_backup.enabled || var.bootstrap_bundle.enabled
    error_message = "etcd_backup.enabled needs bootstrap_bundle.enabled: the snapshots go to the bootstrap bundle's bucket, with the role the control-plane nodes fetch their bundle with. Turn bootstrap_bundle on, or etcd_backup off."
  }
  validation {
    condition     = var.etcd_backup.retention_days >= 1 && floor(var.etcd_backup.retention_days) == var.etcd_backup.retention_days
    error_message = "etcd_backup.retention_days must be a whole number of days, 1 or more."
  }
  validation {
    condition     = can(regex("^[1-9][0-9]{0,4}(min|h)$", var.etcd_backup.every))
    error_message = "etcd_backup.every must be whole minutes or hours, such as \"6h\" or \"90min\" (a systemd time span the node's timer takes)."
  }
}

variable "join_timeout" {
  description = "How long a roll waits for each wave's new nodes to join the cluster before it takes the next wave down (gpucluster_node_pool update_strategy.join_timeout), a Go duration from 0s to 24h; null is the provider's default, 20m. The provider sees a join on the node's serial console, where the node bootstrap reports it; a node that does not join in time stops the roll. \"0s\" rolls without waiting (only where nothing boots the nodes, such as a test against the offline emulator without its node agent)."
  type        = string
  default     = null
}

variable "drain_timeout" {
  description = "How long each node a roll or a shrink is about to stop may take to drain itself first (gpucluster_node_pool update_strategy.drain_timeout), a Go duration from 0s to 24h; null is the provider's default, 15m. The node cordons itself and evicts its pods through the Eviction API, so PodDisruptionBudgets hold; pods a budget still keeps after this time stop the apply before the node is stopped. \"0s\" stops nodes without draining them (only where nothing runs on the nodes, such as a test against the offline emulator without its node agent)."
  type        = string
  default     = null
}

variable "gpu_health_agent" {
  description = "Run the GPU health agent on every GPU node (gpucluster_kubernetes_manifests addons_gpu_health_agent): it taints a node whose GPU fails, evicts its GPU pods and asks the node's pool for a new instance (see the guide \"GPU health\"). It travels with the add-ons in the bootstrap bundle, so it runs only with bootstrap_bundle.enabled; false turns it off."
  type        = bool
  default     = true
  nullable    = false
}

variable "mpi_operator" {
  description = "Apply the MPI Operator with its MPIJob CRD with the add-ons (gpucluster_kubernetes_manifests addons_mpi_operator), so MPIJobs run once the cluster is up. Needs bootstrap_bundle.enabled: the CRD does not fit in the first control-plane node's user data. The simulation scenario modules set it."
  type        = bool
  default     = false
  nullable    = false

  validation {
    condition     = !var.mpi_operator || var.bootstrap_bundle.enabled
    error_message = "mpi_operator = true needs bootstrap_bundle.enabled = true: the MPI Operator's CRD (219 KB of YAML) with the other add-ons does not fit in the 32 KB of user data ECS accepts, so the add-ons must travel in the bootstrap bundle. Turn bundles on (and name the two RAM roles), or set mpi_operator = false and apply the MPI Operator yourself."
  }
}

variable "kueue" {
  description = "Apply Kueue (gpucluster_kubernetes_manifests addons_kueue, 65-kueue.yaml) with the add-ons: its release manifest, the manager configuration with gang admission, a ResourceFlavor per worker pool and per team a namespace, ClusterQueue and LocalQueue. teams: such as { chem = { gpus = 32 }, cfd = { gpus = 16, pool = \"b\" } }, pool a worker_pools key (default the first pool by name), namespace default the team's name; empty: one team \"default\" with every GPU. Needs bootstrap_bundle.enabled (the release is 627 KB of YAML) and, per pool, instance_type or gpus_per_node. Kueue's webhooks refuse Jobs until its manager runs. null: no Kueue."
  type = object({
    teams = optional(map(object({
      gpus      = number
      namespace = optional(string)
      pool      = optional(string)
    })), {})
  })
  default = null

  validation {
    condition     = var.kueue == null || var.bootstrap_bundle.enabled
    error_message = "kueue needs bootstrap_bundle.enabled = true: Kueue's release manifest (627 KB of YAML) does not fit in the 32 KB of user data ECS accepts, so the add-ons must travel in the bootstrap bundle. Turn bundles on (and name the two RAM roles), or set kueue = null and apply Kueue yourself."
  }
  validation {
    condition     = var.kueue == null || alltrue([for t in try(var.kueue.teams, {}) : t.pool == null || contains(keys(var.worker_pools), coalesce(t.pool, "-"))])
    error_message = "kueue.teams: each pool must be a key of worker_pools, such as { chem = { gpus = 16, pool = \"a\" } } for worker_pools.a."
  }
  validation {
    condition     = var.kueue == null || alltrue([for p in var.worker_pools : p.instance_type != null || p.gpus_per_node != null])
    error_message = "kueue sizes each worker pool's quota from its GPUs per node: give every worker pool instance_type or gpus_per_node."
  }
}
