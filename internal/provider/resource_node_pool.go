package provider

import (
	"context"
	"fmt"
	"regexp"
	"time"

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
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

var (
	_ resource.ResourceWithConfigure        = (*nodePoolResource)(nil)
	_ resource.ResourceWithImportState      = (*nodePoolResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*nodePoolResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*nodePoolResource)(nil)
	_ resource.ResourceWithConfigValidators = (*nodePoolResource)(nil)
)

func newNodePoolResource() resource.Resource { return &nodePoolResource{} }

// nodePoolResource is N GPU nodes of one scenario: created in batches of up to 100 under
// deterministic ClientTokens, found again by tag (never one call per node), scaled and rolled in
// place.
type nodePoolResource struct {
	client *cloud.Client
}

// Values users choose from; the validators and the descriptions read the same slices.
var (
	spotStrategies = []string{"NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"}
	diskCategories = []string{"cloud_essd", "cloud_auto", "elastic_ephemeral_disk_standard", "elastic_ephemeral_disk_premium"}
	essdLevels     = []string{"PL0", "PL1", "PL2", "PL3"}
	defaultImageID = "ubuntu_22_04_x64_20G_alibase_20240101.vhd"
	// RAM role names: 1-64 letters, digits, periods and hyphens (RAM CreateRole, RoleName).
	ramRoleNameRE = regexp.MustCompile(`^[A-Za-z0-9.-]{1,64}$`)
)

// maxPoolSize is the most nodes one pool holds: the largest research clusters' GPU node counts.
// The account's ECS quota, not this number, is what usually stops a pool first.
const maxPoolSize = 10000

// Defaults for timeouts: a thousand nodes boot in minutes, but stock can make it slower.
const (
	nodePoolCreateTimeout = 60 * time.Minute
	nodePoolUpdateTimeout = 60 * time.Minute
	nodePoolDeleteTimeout = 30 * time.Minute
)

func (r *nodePoolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_pool"
}

func (r *nodePoolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	diskAttrs := func(what string) map[string]schema.Attribute {
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
	resp.Schema = schema.Schema{
		MarkdownDescription: "A pool of GPU nodes for one research scenario. The provider picks the instance type from " +
			"the scenario and GPU model (or takes `instance_type`), refuses at plan time what the catalog knows cannot work, " +
			"creates the nodes in batches of up to 100 with deterministic ClientTokens, falls back to the next zone (and, if " +
			"allowed, the next instance type) when stock runs out, and scales and rolls the pool in place.",
		Attributes: map[string]schema.Attribute{
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
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "When every zone is out of stock for the planned type, go on with the catalog's next-ranked candidate. Default false.",
			},
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
				Attributes:          diskAttrs("system disk"),
			},
			"data_disks": schema.ListNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Data disks per node (at most 16), such as ESSD PL3 for a node-local hot tier. Changing them rolls the nodes.",
				NestedObject:        schema.NestedAttributeObject{Attributes: diskAttrs("data disk")},
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
			"kubernetes": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "How the nodes join Kubernetes. With `api_endpoint` (workers) or `role = \"control_plane\"`, the provider " +
					"renders the node bootstrap (driver, CUDA, NCCL, container toolkit, eRDMA, mounts, kubeadm) into each node's cloud-init, " +
					"before `user_data`; see `gpucluster_node_bootstrap` for what it does. Labels and taints are added to the defaults " +
					"(see `node_labels`, `node_taints`).",
				Attributes: map[string]schema.Attribute{
					"role": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: fmt.Sprintf("Node role: %s. Default `gpu_worker`. A control plane takes a CPU type (`instance_type = \"ecs.g7.2xlarge\"`), runs `kubeadm init` and gets no GPU labels or taint.", mdValues(bootstrap.Roles())),
						Validators:          []validator.String{stringvalidator.OneOf(bootstrap.Roles()...)},
					},
					"api_endpoint": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "API server `host:port` workers join (control plane: its advertised endpoint, optional). Without it, GPU workers are not bootstrapped and do not join.",
					},
					"join_token": schema.StringAttribute{
						Optional:            true,
						Sensitive:           true,
						MarkdownDescription: "kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`. Sensitive: it never reaches plan output or logs. Changing it does not replace nodes.",
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
							"control-plane certificates hourly. `false`: the pool's 2 or 4 nodes join it (`kubeadm join --control-plane`, stacked etcd) " +
							"through the load balancer, so the control plane has 3 or 5 members. A replaced first node finds the API answering at the " +
							"endpoint and joins instead of creating a second cluster.",
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
					"insecure_skip_ca_verification": schema.BoolAttribute{
						Optional: true,
						MarkdownDescription: "Let joining nodes skip pinning the cluster CA (kubeadm's `unsafeSkipCAVerification`) when `ca_cert_hash` is " +
							"empty. Without it an empty `ca_cert_hash` on a joining pool is a plan-time error: a machine that impersonates the API " +
							"endpoint could take the nodes over. Default false; a warning says when it is on.",
					},
					"addons": schema.MapAttribute{
						Optional:    true,
						ElementType: types.StringType,
						MarkdownDescription: "First control-plane pool only: manifests (file name such as `20-device-plugin.yaml` -> YAML) written " +
							"gzip-compressed to `/etc/gpucluster/addons/` and applied by `gpucluster-addons.service` once the API answers and after every " +
							"boot (`kubectl apply --server-side`, idempotent), with the Flannel CNI (`00-cni-flannel.yaml`). Changing them does not replace " +
							"the node: a new first node applies the new ones.",
					},
					"versions": schema.SingleNestedAttribute{
						Optional:            true,
						MarkdownDescription: "Software versions of the node bootstrap, as in `gpucluster_node_bootstrap`; unset fields take its defaults. Changing them rolls the nodes.",
						Attributes: map[string]schema.Attribute{
							"driver":     schema.StringAttribute{Optional: true, MarkdownDescription: "NVIDIA data-centre driver."},
							"cuda":       schema.StringAttribute{Optional: true, MarkdownDescription: "CUDA toolkit `MAJOR.MINOR`."},
							"nccl":       schema.StringAttribute{Optional: true, MarkdownDescription: "NCCL `MAJOR.MINOR.PATCH`."},
							"kubernetes": schema.StringAttribute{Optional: true, MarkdownDescription: "Kubernetes `1.MINOR` or `1.MINOR.PATCH`."},
						},
					},
					"nccl_env": schema.MapAttribute{
						Optional:            true,
						ElementType:         types.StringType,
						MarkdownDescription: "NCCL environment overrides for GPU workers, on top of the network's defaults (see `gpucluster_node_bootstrap`). Changing them rolls the nodes.",
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
				},
			},
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
				Default:             stringdefault.StaticString(bootstrap.MirrorInternet),
				MarkdownDescription: packageMirrorDoc + " Changing it rolls the nodes. A pool whose bootstrap needs the internet on a network with `egress.mode = \"none\"` is refused at plan (at apply, before any node is asked for, when `network_id` is not known at plan).",
				Validators:          []validator.String{stringvalidator.OneOf(bootstrap.PackageMirrors()...)},
			},
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
			"user_data": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Extra cloud-init for the nodes, merged after the provider's own. Changing it rolls the nodes.",
			},
			"update_strategy": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "How changes that need new machines (instance type, image, disks, user data) are rolled out.",
				Attributes: map[string]schema.Attribute{
					"max_unavailable": schema.Int64Attribute{
						Required:            true,
						MarkdownDescription: "Most nodes replaced at once: each wave deletes this many outdated nodes and waits for their replacements to run.",
						Validators:          []validator.Int64{int64validator.AtLeast(1)},
					},
				},
			},
			"tags": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Tags on every node, changed in place. Keys starting with `gpucluster:` and the built-in node label keys " +
					"(`gpucluster.io/node-role`, `gpucluster.io/scenario`, `gpucluster.io/pool`, `nvidia.com/gpu.present`, `nvidia.com/gpu.product`) " +
					"are reserved: an autoscaling pool's scaling configuration carries those labels as tags for scale from zero. " +
					"A node carries at most 20 tags: the provider's 6 (11 on an autoscaling pool) and these.",
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
				}},
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
			"timeouts": timeoutsAttribute(ctx),
		},
	}
}

func (r *nodePoolResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *nodePoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, nodePoolCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	spec, diags := r.resolveSpec(ctx, &plan, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	poolID := nodepool.NewPoolID()
	spec.PoolID = poolID
	plan.ID = types.StringValue(poolID)
	if spec.Autoscale != nil {
		r.applyAutoscaling(ctx, spec, &plan, &resp.Diagnostics)
		if !plan.ScalingGroupID.IsUnknown() {
			// Whatever happened after the group exists, state records it: never an orphan.
			resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		}
		return
	}
	plan.ScalingGroupID = types.StringNull()
	summary := fmt.Sprintf("creating node pool %q (%s)", plan.Name.ValueString(), poolID)

	// Nodes of an earlier apply of this pool that was killed before it could save state carry
	// the pool's name and network: adopt them so a re-run never doubles the pool.
	orphans, err := nodepool.AdoptOrphans(ctx, r.client, spec)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}

	outcome, err := nodepool.Grow(ctx, r.client, spec, "create", orphans, int(plan.Size.ValueInt64()))
	// Whatever happened, every node that exists is recorded: a failed create leaves a tainted
	// resource that knows its nodes, never an orphan.
	r.finish(ctx, spec, &plan, outcome, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
	}
}

func (r *nodePoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !state.ScalingGroupID.IsNull() {
		if !r.readAutoscaled(ctx, &state, &resp.Diagnostics) {
			resp.State.RemoveResource(ctx)
			return
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	nodes, err := r.client.ListInstancesByTags(ctx, map[string]string{tagPool: state.ID.ValueString()})
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading node pool (%s)", state.ID.ValueString()), err.Error())
		return
	}
	if len(nodes) < int(state.Size.ValueInt64()) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("node pool (%s) has fewer nodes than its size", state.ID.ValueString()),
			fmt.Sprintf("%d of %d nodes exist (deleted outside Terraform, or released by auto_release_after). The next apply brings the pool back to its size.", len(nodes), state.Size.ValueInt64()))
	}
	resp.Diagnostics.Append(state.setNodes(ctx, nodes)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *nodePoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, nodePoolUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	plan.ID = state.ID
	spec, diags := r.resolveSpec(ctx, &plan, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec.PoolID = state.ID.ValueString()
	if spec.Autoscale != nil {
		r.applyAutoscaling(ctx, spec, &plan, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	if old := poolLoadBalancer(ctx, &state); old != spec.LoadBalancerID {
		// Moved to another load balancer, or off one: the old one loses the pool's nodes.
		if err := nodepool.DetachBackends(ctx, r.client, old, nodeIDs(state)); err != nil {
			resp.Diagnostics.AddError(fmt.Sprintf("updating node pool (%s)", spec.PoolID), err.Error())
			return
		}
	}
	outcome, err := nodepool.Reconcile(ctx, r.client, spec)
	r.finish(ctx, spec, &plan, outcome, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("updating node pool (%s)", spec.PoolID), err.Error())
	}
}

func (r *nodePoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, nodePoolDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := fmt.Sprintf("deleting node pool (%s)", state.ID.ValueString())
	if !state.ScalingGroupID.IsNull() {
		if err := nodepool.DeleteScalingGroup(ctx, r.client, state.ID.ValueString(), state.ScalingGroupID.ValueString()); err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
		}
		return
	}

	if err := nodepool.DeleteNodes(ctx, r.client, state.ID.ValueString(), poolLoadBalancer(ctx, &state), state.nodeIDs()); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
	}
}

func (r *nodePoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if !poolIDPattern.MatchString(id) {
		resp.Diagnostics.AddError("importing node pool", fmt.Sprintf("%q is not a pool id: pool ids look like np-0123456789ab (the `id` attribute, also the `gpucluster:pool` tag on every node).", id))
		return
	}
	nodes, err := r.client.ListInstancesByTags(ctx, map[string]string{tagPool: id})
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("importing node pool (%s)", id), err.Error())
		return
	}
	if imported, found := r.importAutoscaled(ctx, id, nodes, &resp.Diagnostics); found || resp.Diagnostics.HasError() {
		if imported != nil {
			resp.Diagnostics.Append(resp.State.Set(ctx, imported)...)
		}
		return
	}
	if len(nodes) == 0 {
		resp.Diagnostics.AddError(fmt.Sprintf("importing node pool (%s)", id), "no instance carries the tag gpucluster:pool="+id+" in region "+r.client.Region())
		return
	}
	state, diags := importedPool(ctx, id, nodes)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}
