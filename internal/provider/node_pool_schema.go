package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The node pool's schema, one builder per group of attributes; Schema joins them.

func (r *nodePoolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := joinAttributes(nodePoolIdentityAttributes(), nodePoolSizeAttributes(), nodePoolMachineAttributes(), nodePoolSetupAttributes(),
		nodePoolComputedAttributes(), nodePoolAcceptanceAttributes())
	attrs["kubernetes"] = nodePoolKubernetesSchema()
	attrs["bootstrap_bundle"] = bootstrapBundleSchema()
	attrs["timeouts"] = timeoutsAttribute(ctx)
	resp.Schema = schema.Schema{
		MarkdownDescription: "A pool of GPU nodes for one research scenario. The provider picks the instance type from " +
			"the scenario and GPU model (or takes `instance_type`), refuses at plan time what the catalog knows cannot work, " +
			"creates the nodes in batches of up to 100 with deterministic ClientTokens, falls back to the next zone (and, if " +
			"allowed, the next instance type) when stock runs out, and scales and rolls the pool in place. A plan that grows " +
			"the pool (a new pool, a larger `size` or `autoscaling.max_size`) is checked first for the nodes it adds only: " +
			"the vCPU quotas, the stock of its zones (the spot stock for spot nodes), its vSwitches' free addresses and, for " +
			"autoscaling, the scaling group quota; each shortfall is an error naming the need, what is available and the fix. " +
			"A pool planned as new that already has nodes (a tainted pool being replaced, an interrupted apply's nodes) counts " +
			"them as its own and its stock is not checked. " +
			"A plan that does not grow makes no such call and is never refused by an account full of the pool's own nodes.",
		Attributes: attrs,
	}
}

// joinAttributes is the union of attribute maps (of a resource's or a data source's schema); a
// name in two of them is a programming error.
func joinAttributes[A any](groups ...map[string]A) map[string]A {
	out := map[string]A{}
	for _, g := range groups {
		for name, a := range g {
			if _, dup := out[name]; dup {
				panic("attribute " + name + " is defined twice")
			}
			out[name] = a
		}
	}
	return out
}

// diskAttributes are the attributes of the system disk and of each data disk (what names it).
func diskAttributes(what string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"category": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: fmt.Sprintf("Disk category of the %s: %s.", what, mdValues(diskCategories)),
			Validators:          []validator.String{stringvalidator.OneOf(diskCategories...)},
		},
		"performance_level": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: fmt.Sprintf("ESSD performance level, for `cloud_essd`: %s. Each level has a minimum size (PL2 461 GiB, PL3 1,261 GiB), checked at plan time.", mdValues(essdLevels)),
			Validators:          []validator.String{stringvalidator.OneOf(essdLevels...)},
		},
		"size_gib": schema.Int64Attribute{
			Required:            true,
			MarkdownDescription: fmt.Sprintf("Size of the %s in GiB.", what),
			Validators:          []validator.Int64{int64validator.Between(1, 65536)},
		},
	}
}

// nodePoolIdentityAttributes: the pool's id, name, network and what its nodes are (scenario, GPU, type).
func nodePoolIdentityAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Pool id (`np-` and 12 hex digits). Every node carries it in the tag `gpucluster:pool`.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"name": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Pool name, unique within its network: a re-run after an interrupted apply adopts the " +
				"nodes tagged with this name and network instead of creating them again. 2-64 characters.",
			Validators: []validator.String{stringvalidator.LengthBetween(2, 64), stringvalidator.RegexMatches(poolNamePattern,
				"must start with a letter and hold only letters, digits, '-', '_' and '.'")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"network_id": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Id of the `gpucluster_rdma_network` the nodes join: zones, vSwitches, security group, placement groups, HPC cluster and eRDMA come from it.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"scenario": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: fmt.Sprintf("Research scenario the pool serves: %s. It decides which checks run and how candidates are ranked.", mdValues(catalog.ScenarioNames())),
			Validators:          []validator.String{stringvalidator.OneOf(catalog.ScenarioNames()...)},
		},
		"gpu_model": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: fmt.Sprintf("GPU model wanted: %s. Models with no Alibaba family of that name map honestly (H100 -> gn8v with a warning). Conflicts with `instance_type`.", mdValues(catalog.GPUModelNames())),
		},
		"gpus_per_node": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "GPUs per node; must be a size the model is offered in. Needs `gpu_model`.",
			Validators:          []validator.Int64{int64validator.Between(1, 16)},
		},
		"instance_type": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "ECS instance type such as `ecs.gn7e-c16g1.32xlarge`. Set it to pin the type; otherwise the " +
				"catalog's best candidate for `scenario`, `gpu_model` and `gpus_per_node` is planned here. With " +
				"`instance_type_fallback`, nodes may land on the next candidate: `nodes[*].instance_type` shows what each got.",
		},
	}
}

// nodePoolSizeAttributes: how many nodes and where: a fixed size or autoscaling, the floor, the zones and the type fallback.
func nodePoolSizeAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"autoscaling":      autoscalingSchema(),
		"scaling_group_id": scalingGroupIDSchema(),
		"size": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: "Number of nodes of a fixed-size pool (exactly one of `size` and `autoscaling`). Changing it adds nodes or removes the newest ones in place. A control plane " +
				"(`kubernetes.role = \"control_plane\"`) is 1, 3 or 5 nodes, the etcd member counts that keep quorum; 3 and 5 need `kubernetes.load_balancer_id`.",
			Validators: []validator.Int64{int64validator.Between(1, maxPoolSize)},
		},
		"min_size": schema.Int64Attribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "All-or-nothing floor: when stock everywhere cannot reach it, the apply fails with one " +
				"error listing every zone and type tried (the nodes that do exist stay in state). Default: `size`.",
			Validators: []validator.Int64{int64validator.AtLeast(1)},
		},
		"zone_ids": schema.ListAttribute{
			Optional:            true,
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Zones to try, in order, when stock runs out. Default: the network's zones. Each must be one of the network's zones.",
			Validators:          []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
		},
		"instance_type_fallback": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
			MarkdownDescription: "When every zone is out of stock for the planned type, go on with the catalog's next-ranked candidate. Default false. " +
				"The plan's stock check then counts a zone with any of those candidates in stock (each type over the zones in order, as the create tries them).",
		},
	}
}

// nodePoolMachineAttributes: what each node is (image, RAM role, disks, spot, release time) and its tags.
func nodePoolMachineAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"image_id": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			Default:             stringdefault.StaticString(defaultImageID),
			MarkdownDescription: fmt.Sprintf("Image of the nodes. Default `%s`. Changing it rolls the nodes (see `update_strategy`).", defaultImageID),
		},
		"ram_role_name": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Instance RAM role of the nodes (ECS `RamRoleName`): programs on a node get its temporary credentials from the " +
				"metadata server, with no AccessKey on the node. The Cluster Autoscaler on the control plane authenticates this way: give the " +
				"control-plane pools a role allowed the Auto Scaling calls it makes (see the guide on autoscaling). The role must exist and trust " +
				"`ecs.aliyuncs.com`. Changing it rolls the nodes (see `update_strategy`).",
			Validators: []validator.String{stringvalidator.RegexMatches(ramRoleNameRE, "must be 1-64 letters, digits, '.' and '-', such as gpucluster-control-plane")},
		},
		"system_disk": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "System disk. Default: 100 GiB `cloud_essd` PL1. Changing it rolls the nodes.",
			Attributes:          diskAttributes("system disk"),
		},
		"data_disks": schema.ListNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Data disks per node (at most 16), such as ESSD PL3 for a node-local hot tier. Changing them rolls the nodes.",
			NestedObject:        schema.NestedAttributeObject{Attributes: diskAttributes("data disk")},
			Validators:          []validator.List{listvalidator.SizeAtMost(16)},
		},
		"spot": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Spot (preemptible) nodes. Not allowed with low-latency placement: deployment sets take no spot instances.",
			Attributes: map[string]schema.Attribute{
				"strategy": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: fmt.Sprintf("ECS SpotStrategy: %s.", mdValues(spotStrategies)),
					Validators:          []validator.String{stringvalidator.OneOf(spotStrategies...)},
				},
				"max_hourly_price": schema.Float64Attribute{
					Optional:            true,
					MarkdownDescription: "Highest hourly price per node, required with `SpotWithPriceLimit`.",
					Validators:          []validator.Float64{float64validator.AtLeast(0.001)},
				},
			},
		},
		"auto_release_after": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Release nodes this long after creation (ECS AutoReleaseTime), such as `72h` for the scenarios' idle " +
				"reclaim target. A Go duration of at least 30m (the service's minimum) and at most 3 years.",
		},
		"tags": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Tags on every node, changed in place. Keys starting with `gpucluster:` and the built-in node label keys " +
				"(`gpucluster.io/node-role`, `gpucluster.io/scenario`, `gpucluster.io/pool`, `nvidia.com/gpu.present`, `nvidia.com/gpu.product`) " +
				"are reserved: an autoscaling pool's scaling configuration carries those labels as tags for scale from zero. " +
				"A node carries at most 20 tags: the provider's 6 and one kept free for `gpucluster:replace-requested` (which the GPU health agent sets on a node whose GPU must be replaced; 11 of the provider's and none kept free on an autoscaling pool) and these.",
		},
	}
}

// nodePoolSetupAttributes: how each node is set up at boot (bootstrap, mirror, cloud-init, mounts) and how a change is rolled.
func nodePoolSetupAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"mounts": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "fstab lines the bootstrap mounts on every node, such as a storage tier's `fstab_line`. Changing them rolls the nodes.",
		},
		"bootstrap": schema.BoolAttribute{
			Optional:            true,
			Computed:            true,
			Default:             booldefault.StaticBool(true),
			MarkdownDescription: "Render the provider's node bootstrap into the nodes' cloud-init (default true). Set false to bring your own image or `user_data` entirely.",
		},
		"package_mirror": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: packageMirrorDoc + " Unset, a new pool takes its region's default and keeps it. Changing it rolls the nodes. A pool whose bootstrap needs the internet on a network with `egress.mode = \"none\"` is refused at plan (at apply, before any node is asked for, when `network_id` is not known at plan).",
			Validators:          []validator.String{stringvalidator.OneOf(bootstrap.PackageMirrors()...)},
		},
		"user_data": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Extra cloud-init for the nodes, merged after the provider's own. Changing it rolls the nodes.",
		},
		"update_strategy": updateStrategyAttribute(),
	}
}

// nodePoolComputedAttributes: what the plan and the apply fill in: labels, taints, nodes, GPUs, findings, price.
func nodePoolComputedAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"node_labels": schema.MapAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Labels every node joins Kubernetes with, exactly as the kubeadm configuration registers them: `gpucluster.io/node-role`, `gpucluster.io/scenario`, `gpucluster.io/pool`, on GPU workers `nvidia.com/gpu.present=true` and `nvidia.com/gpu.product=<model>`, plus `kubernetes.labels`.",
		},
		"node_taints": schema.ListAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: fmt.Sprintf("Taints every node joins with, exactly as the kubeadm configuration registers them: on GPU workers `%s` (unless `kubernetes.taints` has that key), plus `kubernetes.taints`. A control plane also keeps kubeadm's own `node-role.kubernetes.io/control-plane:NoSchedule`, not listed here.", bootstrap.GPUTaint()),
		},
		"nodes": schema.ListNestedAttribute{
			Computed:            true,
			MarkdownDescription: "The pool's nodes, oldest first.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"id":                schema.StringAttribute{Computed: true, MarkdownDescription: "Instance id."},
				"zone_id":           schema.StringAttribute{Computed: true, MarkdownDescription: "Zone."},
				"private_ip":        schema.StringAttribute{Computed: true, MarkdownDescription: "Primary private IPv4 address."},
				"status":            schema.StringAttribute{Computed: true, MarkdownDescription: "ECS status (Running once the apply is done)."},
				"instance_type":     schema.StringAttribute{Computed: true, MarkdownDescription: "Instance type this node got."},
				"deployment_set_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Deployment set (placement group), if any."},
				"replace_requested": schema.StringAttribute{Computed: true, MarkdownDescription: "Why the GPU health agent on this node asked for a new instance (such as `XID 79 on GPU 1`), read from the node's `" + tagging.ReplaceRequested + "` tag; null when it has not. A fixed pool's plan then shows its nodes replaced and the apply replaces this node as it rolls an outdated one; an autoscaled pool's node is replaced by Auto Scaling instead."},
			}},
		},
		"bootstrap_bundle_key": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "With `bootstrap_bundle`: the object key (`<key_prefix>/<sha256>.tar.gz`) of the bundle the last apply " +
				"uploaded, which the user data (the stub) of every node it made or rolled names; a node a change did not replace keeps " +
				"the stub, and the bundle, it booted with. Null without `bootstrap_bundle`.",
		},
		"gpu_count": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "GPUs in the pool: nodes times GPUs per node.",
		},
		"findings": schema.ListNestedAttribute{
			Computed:            true,
			MarkdownDescription: "The catalog's checks of this pool against its scenario (errors stop the plan; warnings and info are kept here).",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"severity":    schema.StringAttribute{Computed: true, MarkdownDescription: "`error`, `warning` or `info`."},
				"code":        schema.StringAttribute{Computed: true, MarkdownDescription: "Stable code, such as `gpu_memory`."},
				"requirement": schema.StringAttribute{Computed: true, MarkdownDescription: "What the scenario asks for."},
				"measured":    schema.StringAttribute{Computed: true, MarkdownDescription: "What the instance type has."},
				"message":     schema.StringAttribute{Computed: true, MarkdownDescription: "The finding in one sentence."},
				"hint":        schema.StringAttribute{Computed: true, MarkdownDescription: "What would meet the requirement."},
			}},
		},
		"estimated_hourly_price": schema.Float64Attribute{
			Computed: true,
			MarkdownDescription: "Price of the whole pool per hour, from ECS DescribePrice (the emulator uses its own illustrative price table). " +
				"An autoscaling pool's is the price of the nodes it had at the last apply, spot and pay-as-you-go nodes each at their own price; " +
				"`autoscaling.max_hourly_price` bounds it at `max_size`.",
		},
	}
}

// nodePoolKubernetesSchema is the kubernetes block: how the nodes join, the control plane's own
// settings, and the software versions.
func nodePoolKubernetesSchema() schema.Attribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "How the nodes join Kubernetes. With `api_endpoint` (workers) or `role = \"control_plane\"`, the provider " +
			"renders the node bootstrap (driver, CUDA, NCCL, container toolkit, eRDMA, mounts, kubeadm) into each node's cloud-init, " +
			"before `user_data`; see `gpucluster_node_bootstrap` for what it does. Labels and taints are added to the defaults " +
			"(see `node_labels`, `node_taints`).",
		Attributes: joinAttributes(kubernetesJoinAttributes(), kubernetesControlPlaneAttributes(), kubernetesSoftwareAttributes()),
	}
}

// kubernetesJoinAttributes: the node's role, how it finds and trusts the cluster, and its labels and taints.
func kubernetesJoinAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"role": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: fmt.Sprintf("Node role: %s. Default `gpu_worker`. A control plane takes a CPU type (`instance_type = \"ecs.g7.2xlarge\"`), runs `kubeadm init` and gets no GPU labels or taint.", mdValues(bootstrap.Roles())),
			Validators:          []validator.String{stringvalidator.OneOf(bootstrap.Roles()...)},
		},
		"api_endpoint": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "API server `host:port` workers join (control plane: its advertised endpoint, optional). Without it, GPU workers are not bootstrapped and do not join.",
		},
		"api_server_name": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "The DNS name the cluster's API is reached by when `api_endpoint` is a control plane's internal load balancer: " +
				"`gpucluster_control_plane_endpoint.<name>.api_server_name`. kubeadm's `controlPlaneEndpoint` and every join use it with " +
				"`api_endpoint`'s port, the API server certificate names it and the load balancer's address, and each node maps it in " +
				"`/etc/hosts`: a worker to `api_endpoint`'s address, a control-plane node to that address until it serves the API and to " +
				"its own private address from then on, because a Layer-4 Classic Load Balancer gives no answer to a backend server's " +
				"connection that it forwards back to that server. `api_endpoint` must then be `IPv4:port`. A control-plane pool with " +
				"`load_balancer_id` and no `api_endpoint` takes the load balancer's name by default; workers that join such a control " +
				"plane need it, since their kubelet reaches the API at `controlPlaneEndpoint`. Changing it replaces the nodes.",
		},
		"join_token": schema.StringAttribute{
			Optional:  true,
			Sensitive: true,
			MarkdownDescription: "kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`. Sensitive: it never reaches plan output or logs. Changing it does not replace nodes. " +
				"The first control-plane node creates it with a time to live of 24 h: a pool that joins with it can only grow within that day; " +
				"pools with `bootstrap_bundle.join_token_key` join with the fresh token the control plane stores instead.",
		},
		"join_token_wo": schema.StringAttribute{
			Optional:  true,
			Sensitive: true,
			WriteOnly: true,
			MarkdownDescription: "Write-only form of `join_token` (OpenTofu and Terraform >= 1.11): never stored in plan or state. Pass " +
				"`ephemeral.gpucluster_cluster_ca.<name>.join_token` of a seeded CA. Needed in every run that creates nodes. Conflicts with `join_token`.",
			Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("join_token"))},
		},
		"ca_cert_hash": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "`sha256:<hex>` of the cluster CA (`gpucluster_cluster_ca.<name>.ca_cert_hash`), pinned by every joining node. Required on joining pools unless `insecure_skip_ca_verification = true`.",
		},
		"pod_subnet": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Pod network CIDR for `kubeadm init` and the Flannel CNI (first control-plane pool), such as the network's reserved pod CIDR. Default `10.244.0.0/16`.",
		},
		"image_registry": schema.StringAttribute{Optional: true, MarkdownDescription: imageRegistryDoc},
		"insecure_skip_ca_verification": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Let joining nodes skip pinning the cluster CA (kubeadm's `unsafeSkipCAVerification`) when `ca_cert_hash` is " +
				"empty. Without it an empty `ca_cert_hash` on a joining pool is a plan-time error: a machine that impersonates the API " +
				"endpoint could take the nodes over. Default false; a warning says when it is on.",
		},
		"labels": schema.MapAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Extra node labels; a key here overrides a default.",
		},
		"taints": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Extra taints, written `key=value:Effect` or `key:Effect` (Effect is NoSchedule, PreferNoSchedule or NoExecute).",
			Validators:          []validator.List{listvalidator.ValueStringsAre(stringvalidator.RegexMatches(taintPattern, "must be key=value:Effect with Effect NoSchedule, PreferNoSchedule or NoExecute"))},
		},
	}
}

// kubernetesControlPlaneAttributes: a control plane's load balancer, init or join, and the first node's CA, certificate key and add-ons.
func kubernetesControlPlaneAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"load_balancer_id": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Control plane only: the `load_balancer_id` of the `gpucluster_control_plane_endpoint` in front of " +
				"the API servers. After create, after a scale and after every wave of a roll, the load balancer's backend " +
				"servers include exactly the pool's running nodes: nodes about to be deleted leave it first, replacements join " +
				"once running, and destroying the pool takes its nodes out before deleting them. The first control-plane pool and the " +
				"joining one share it: servers that are instances of another pool are kept, servers that no longer exist are removed. " +
				"Without `api_endpoint`, its address:6443 is the endpoint the nodes use.",
			Validators: []validator.String{stringvalidator.RegexMatches(loadBalancerIDPattern, "must be a load balancer id such as lb-2ze7o5h8x9k1 (gpucluster_control_plane_endpoint.<name>.load_balancer_id)")},
		},
		"control_plane_init": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Control plane only. `true` (the default for a control plane): this pool of 1 node creates the cluster " +
				"(`kubeadm init`, with `--upload-certs` when `certificate_key` is set), applies the CNI and `addons`, and re-uploads the " +
				"control-plane certificates (see `control_plane_size`). `false`: the pool's 2 or 4 nodes join it (`kubeadm join --control-plane`, stacked etcd) " +
				"through the load balancer, so the control plane has 3 or 5 members. A replaced first node finds the API answering at the " +
				"endpoint and joins instead of creating a second cluster.",
		},
		"control_plane_size": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: "Control plane only: the control plane's intended number of nodes (1, 3, 5 or 7), the same on every " +
				"control-plane pool. With it and `certificate_key`, every control-plane node uploads the control-plane certificates " +
				"(the `kubeadm-certs` Secret, which kubeadm deletes after two hours) only while fewer control-plane Nodes are Ready " +
				"than this, and deletes them when the control plane is full; a replacement node joins within an hour of the loss. " +
				"Unset: the first node re-uploads them every hour for good.",
		},
		"certificate_key": schema.StringAttribute{
			Optional:  true,
			Sensitive: true,
			MarkdownDescription: "kubeadm certificate key (64 hex digits, `gpucluster_cluster_ca.<name>.certificate_key`) that encrypts the " +
				"control-plane certificates the first node uploads. Required on a joining control-plane pool; on the first pool it turns on " +
				"`--upload-certs`. Sensitive.",
		},
		"certificate_key_wo": schema.StringAttribute{
			Optional:  true,
			Sensitive: true,
			WriteOnly: true,
			MarkdownDescription: "Write-only form of `certificate_key` (OpenTofu and Terraform >= 1.11): never stored in plan or state. Pass " +
				"`ephemeral.gpucluster_cluster_ca.<name>.certificate_key` of a seeded CA. Needed in every run that creates nodes. " +
				"Conflicts with `certificate_key`.",
			Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("certificate_key"))},
		},
		"ca_cert_pem": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "First control-plane pool only: the cluster CA certificate (`gpucluster_cluster_ca.<name>.cert_pem`) kubeadm uses instead of making one, so `ca_cert_hash` is known before any node boots. Must match `ca_cert_hash`.",
		},
		"ca_key_pem": schema.StringAttribute{
			Optional:            true,
			Sensitive:           true,
			MarkdownDescription: "First control-plane pool only: the CA's private key (`gpucluster_cluster_ca.<name>.private_key_pem`), written to `/etc/kubernetes/pki/ca.key` (mode 0600) before `kubeadm init`. Sensitive: never in plan output or logs.",
		},
		"ca_key_pem_wo": schema.StringAttribute{
			Optional:  true,
			Sensitive: true,
			WriteOnly: true,
			MarkdownDescription: "Write-only form of `ca_key_pem` (OpenTofu and Terraform >= 1.11): never stored in plan or state. Pass " +
				"`ephemeral.gpucluster_cluster_ca.<name>.private_key_pem` of a seeded CA so the key is in no state at all. Needed in " +
				"every run that creates the first node (create, replacement). Conflicts with `ca_key_pem`.",
			Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("ca_key_pem"))},
		},
		"addons": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "First control-plane pool only: manifests (file name such as `20-device-plugin.yaml` -> YAML) written " +
				"gzip-compressed to `/etc/gpucluster/addons/` and applied by `gpucluster-addons.service` once the API answers and after every " +
				"boot (`kubectl apply --server-side`, idempotent), with the Flannel CNI (`00-cni-flannel.yaml`). Changing them does not replace " +
				"the node: a new first node applies the new ones.",
		},
	}
}

// kubernetesSoftwareAttributes: software versions and NCCL settings of the node bootstrap.
func kubernetesSoftwareAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"versions": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Software versions of the node bootstrap, as in `gpucluster_node_bootstrap`; unset fields take its defaults. Changing them rolls the nodes.",
			Attributes: map[string]schema.Attribute{
				"driver":     schema.StringAttribute{Optional: true, MarkdownDescription: "NVIDIA data-centre driver."},
				"cuda":       schema.StringAttribute{Optional: true, MarkdownDescription: "CUDA toolkit `MAJOR.MINOR`."},
				"nccl":       schema.StringAttribute{Optional: true, MarkdownDescription: "NCCL `MAJOR.MINOR.PATCH`."},
				"kubernetes": schema.StringAttribute{Optional: true, MarkdownDescription: "Kubernetes `1.MINOR` or `1.MINOR.PATCH`. A change moves one minor at a time: skipping a minor or going back is refused at plan (kubeadm upgrades one minor at a time; a kubelet may not be newer than its API server)."},
			},
		},
		"nccl_env": schema.MapAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "NCCL environment overrides for GPU workers, on top of the network's defaults (see `gpucluster_node_bootstrap`). Changing them rolls the nodes.",
		},
		"host_cuda": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Also install the CUDA toolkit (`versions.cuda`) and NCCL (`versions.nccl`) on the GPU workers' hosts, from " +
				"NVIDIA's repository (developer.download.nvidia.com, several GB, from the internet). Default `false`: containers " +
				"bring their own CUDA and NCCL and need only the driver. Changing it rolls the nodes.",
		},
	}
}
