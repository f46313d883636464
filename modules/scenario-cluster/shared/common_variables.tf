# Inputs that ai-training, molecular-dynamics, engineering-simulation and scenario-cluster itself
# declare alike, written once here and linked into each of them (a relative symlink: OpenTofu and
# Terraform load it as a file of that module). The checks run at the scenario module's input, where
# the user set the value. Not a module of its own.

variable "name" {
  description = "Cluster name: names the network, the pools (<name>-cp, <name>-<pool>) and the storage tiers the scenario has (<name>-hot, <name>-warm, <name>-cold). 3-40 lowercase letters, digits and hyphens."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,38}[a-z0-9]$", var.name))
    error_message = "name must be 3-40 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen (for example \"llm-train\")."
  }
}

variable "gpus_per_node" {
  description = "GPUs per node of the worker pools that set neither gpus_per_node nor instance_type. 8: a whole NVLink-connected node."
  type        = number
  default     = 8

  validation {
    condition     = var.gpus_per_node >= 1 && var.gpus_per_node <= 16 && floor(var.gpus_per_node) == var.gpus_per_node
    error_message = "gpus_per_node must be a whole number from 1 to 16, and a size the GPU model is offered in (the findings list the sizes that exist)."
  }
}

variable "admin_cidrs" {
  description = "IPv4 blocks allowed to reach SSH and the Kubernetes API (6443): your office block or bastion. Empty: nothing from outside the cluster."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for c in var.admin_cidrs : can(cidrhost(c, 0)) && c != "0.0.0.0/0"])
    error_message = "admin_cidrs must be CIDR blocks such as \"203.0.113.0/24\", and not 0.0.0.0/0: give your office block or bastion address."
  }
}

variable "idle_reclaim_after" {
  description = "How long an opted-in job (label gpucluster.io/reap-after-max-runtime=true) may run before the reaper reclaims it. 72h by default, the scenario's target."
  type        = string
  default     = "72h"
}

variable "validation_jobs" {
  description = "Also apply the validation jobs with the add-ons once the API answers: nccl-tests on every GPU node, the cross-node all-reduce (one pod per GPU node, never two on one) and, in the simulation scenarios, HPCG. Off by default: they hold every GPU for minutes."
  type        = bool
  default     = false
  nullable    = false
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
  description = "Run the GPU health agent on every GPU node: it taints a node whose GPU fails, evicts its GPU pods and asks the node's pool for a new instance (see the guide \"GPU health\"). It travels with the add-ons in the bootstrap bundle, so it runs only with bootstrap_bundle.enabled; false turns it off."
  type        = bool
  default     = true
  nullable    = false
}

variable "acceptance" {
  description = "The acceptance gate on every fixed GPU worker pool (gpucluster_node_pool acceptance, on by default): once a pool's nodes run, a control-plane node checks each (DCGM's level-2 diagnostic, nccl-tests over its GPUs) and the pool (an all-reduce across its nodes against a floor from the catalog's interconnect; HPCG's parallel efficiency against the scenario's target in molecular dynamics and simulation), replaces a node that fails (at most max_replacements, 2) and fails the apply naming the node, the check and the figure after that. An object of enabled (true), timeout (30m per round of checks) and max_replacements. Only with the module's control plane (control_plane.enabled); autoscaling pools are not gated (the GPU health agent covers them). See the guide \"GPU health\"."
  type = object({
    enabled          = optional(bool, true)
    timeout          = optional(string, "30m")
    max_replacements = optional(number, 2)
  })
  default  = {}
  nullable = false
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

variable "package_mirror" {
  description = "Where the node bootstrap takes its packages from (and where nodes' pip looks): internet (the upstream sources) or alibaba_vpc (Alibaba Cloud's in-VPC mirror, mirrors.cloud.aliyuncs.com: Ubuntu with the NVIDIA driver and Fabric Manager, the Kubernetes packages, the NVIDIA container toolkit, PyPI). Null: the region's default, alibaba_vpc in mainland China (cn-* but cn-hongkong), internet elsewhere. With alibaba_vpc and an in-VPC image_registry (the mainland defaults) the nodes need no route to the internet, and network.egress_mode = \"none\" is allowed."
  type        = string
  default     = null

  validation {
    condition     = var.package_mirror == null || contains(["internet", "alibaba_vpc"], coalesce(var.package_mirror, "internet"))
    error_message = "package_mirror must be internet or alibaba_vpc (or null for the region's default)."
  }
}

variable "node_image" {
  description = "GPU node images: with bake = true (the default) every worker pool without an image_id of its own boots from a gpucluster_node_image baked for it in the region (the NVIDIA driver, Fabric Manager on NVSwitch types, the container runtime, the Kubernetes packages, eRDMA, the GPU nodes' images pre-pulled), so its nodes only mount and join; the control plane boots from an image of its own (the control-plane software and kubeadm's images, baked on a CPU type) unless control_plane.image_id is set. A change of what goes into it (software versions, image_registry, package_mirror, eRDMA, NFS mounts) bakes a new image, the pool rolls onto it max_unavailable nodes at a time, and the old image is deleted after. bake = false: nodes boot from the public Ubuntu image and install at every boot. builder_instance_type: the GPU images' builder type (null: the catalog's smallest that fits); copy_to_regions: regions each image is copied to."
  type = object({
    bake                  = optional(bool, true)
    builder_instance_type = optional(string)
    copy_to_regions       = optional(list(string))
  })
  default  = {}
  nullable = false
}

variable "bootstrap_bundle" {
  description = "Takes every pool's node bootstrap out of its user data (enabled, the default): one private, KMS-encrypted gpucluster_bootstrap_bucket (bucket_name, default <name>-bundles-<8 hex digits of the network id>) holds each pool's bootstrap under a prefix of its own, and a node's user data is a stub that fetches its bundle with the node's instance RAM role: control_plane.ram_role_name for the control plane, worker_ram_role_name (a different role) for the workers, each allowed by the bucket policy to read its own pools' prefixes only. Both roles are required when enabled, and the module cannot create them: create two RAM roles that trust ecs.aliyuncs.com, or set enabled = false to put the bootstrap, secrets included, in the user data (see modules/cluster-core, Bootstrap bundle). Turning it on or off rolls every node."
  type = object({
    enabled              = optional(bool, true)
    bucket_name          = optional(string)
    worker_ram_role_name = optional(string)
  })
  default  = {}
  nullable = false
}

variable "etcd_backup" {
  description = "etcd snapshots to the bootstrap bundle's bucket (enabled, off by default; needs bootstrap_bundle.enabled): every control-plane node stores one every `every` (6h) at etcd-snapshots/<name>/, KMS-encrypted, with control_plane.ram_role_name, and the bucket deletes them after retention_days (30). See modules/cluster-core and the guide \"etcd backup and restore\"."
  type = object({
    enabled        = optional(bool, false)
    every          = optional(string, "6h")
    retention_days = optional(number, 30)
  })
  default  = {}
  nullable = false
}

variable "nccl_env" {
  description = "NCCL variables that override the network's defaults in workload pods, such as { NCCL_DEBUG = \"INFO\" }."
  type        = map(string)
  default     = {}
}

variable "join_token" {
  description = "kubeadm bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}. Null: derived from the network id, the name and join_token_salt."
  type        = string
  default     = null
  sensitive   = true

  validation {
    condition     = var.join_token == null || can(regex("^[a-z0-9]{6}\\.[a-z0-9]{16}$", var.join_token))
    error_message = "join_token must be 6 then 16 lowercase letters or digits joined by a dot; generate one with `kubeadm token generate`."
  }
}

variable "join_token_salt" {
  description = "Secret mixed into the derived join token when join_token is null. Set it (from a secret store) outside test clusters."
  type        = string
  default     = null
  sensitive   = true
}

variable "ca_seed" {
  description = "Optional: a secret of at least 32 characters (such as `openssl rand -hex 32`) the cluster CA's key, its certificate key and the join token are derived from, so that none of them is in any plan or state (write-only arguments, OpenTofu and Terraform >= 1.11). Ephemeral: pass it from a secret store (TF_VAR_ca_seed) in every run, with ca_seed_version. Null: the CA key is random and kept in state, marked sensitive."
  type        = string
  default     = null
  sensitive   = true
  ephemeral   = true
}

variable "ca_seed_version" {
  description = "Set (to 1) together with ca_seed; change it whenever ca_seed changes, which replaces the CA and every node. Null: no seed."
  type        = number
  default     = null
}

variable "ca_cert_hash" {
  description = "External control plane only (control_plane.enabled = false): sha256:<hex> of its CA, which the workers pin when they join. The module's own control plane makes its CA (gpucluster_cluster_ca) and ignores this."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags on the network, the storage tiers and every node."
  type        = map(string)
  default     = {}
}
