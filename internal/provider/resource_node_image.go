package provider

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodeimage"
)

var (
	_ resource.ResourceWithConfigure      = (*nodeImageResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodeImageResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodeImageResource)(nil)
)

func newNodeImageResource() resource.Resource { return &nodeImageResource{} }

// nodeImageResource is a baked node image (internal/nodeimage): Terraform glue only.
type nodeImageResource struct {
	client *cloud.Client
}

// nodeImageNamePattern is the vendor's rule for image names (CreateImage ImageName,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-createimage):
// 2 to 128 characters, a letter first; letters, digits, '_', '-' and ':' (no '.', which only
// CopyImage's destination name allows), not starting with http:// or https://. The image is named
// <name>-<8 digits of content_digest> (nodeimage.Spec.ImageName), so name takes at most 119.
var nodeImageNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:-]{1,118}$`)

const (
	nodeImageCreateTimeout = 2 * time.Hour
	nodeImageDeleteTimeout = 30 * time.Minute
)

func (r *nodeImageResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_image"
}

func (r *nodeImageResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *nodeImageResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A GPU node image baked in the region through the ECS API, so that a node boots in about a minute " +
			"instead of installing the NVIDIA stack at every start (`role = \"control_plane\"`: an image for the control-plane nodes, " +
			"which holds their software and kubeadm's images). A builder instance from the public Ubuntu 22.04 image runs " +
			"the install phases a GPU node's bootstrap would run (the in-region package mirror, the NVIDIA driver from Ubuntu's " +
			"`-server` packages with nouveau blacklisted first, Fabric Manager at the driver's version with `nvswitch`, the " +
			"NVIDIA container toolkit and containerd, kubelet, kubeadm and kubectl of the pinned release, eRDMA with `erdma`), " +
			"pulls `images` into containerd, checks the install, seals itself and powers off; `CreateImage` makes the image, " +
			"the builder is deleted and the image is copied to `copy_to_regions`.\n\n" +
			"A `gpucluster_node_pool` whose `image_id` is this image and whose bootstrap settings are the image's skips every " +
			"install phase the image holds (each phase's marker holds a digest of its commands): its nodes only mount and join. " +
			"A pool whose settings differ runs the differing phases at boot, which costs time, never a wrong node.\n\n" +
			"Every argument but `tags` and `builder_instance_type` changes what the image holds and replaces it; so does a new " +
			"provider default (a driver, a Kubernetes release), through `content_digest`. Use `lifecycle { create_before_destroy = true }`: " +
			"the new image is baked, the pools roll onto it, and the old image is deleted last; the vendor refuses to delete an " +
			"image instances still run from, and so does destroy.\n\n" +
			"Crash-safe: the builder, the image and its copies carry `gpucluster:node-image` (the name) and " +
			"`gpucluster:node-image-content` (`content_digest`); an apply killed mid-bake is resumed by the next one, which adopts " +
			"the builder or the image. A builder whose bootstrap fails is deleted and the error quotes the end of its serial console.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The image id (`m-...`).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace,
				MarkdownDescription: "Name of the image, its copies and its builder: 2-119 characters, a letter first, then letters, digits, `_`, `-` and `:` " +
					"(CreateImage takes no `.`). The image itself is named `<name>-<first 8 characters of content_digest>`, so the image that " +
					"replaces it can be made while it still exists (the vendor refuses two images of one name in a region).",
				Validators: []validator.String{stringvalidator.RegexMatches(nodeImageNamePattern, "must be 2-119 characters: a letter first, then letters, digits, '_', '-' or ':' (CreateImage allows no '.')")}},
			"role": nodeImageRoleAttribute(),
			"network_id": schema.StringAttribute{Required: true, PlanModifiers: replace,
				MarkdownDescription: "The `gpucluster_rdma_network` the builder runs in (its first zone's vSwitch and its security group). " +
					"The builder downloads what the nodes would: with the in-VPC mirror and an in-VPC `image_registry` it needs no egress."},
			"builder_instance_type": nodeImageBuilderTypeAttribute(),
			"base_image_id": schema.StringAttribute{Optional: true, Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()},
				MarkdownDescription: "The public Ubuntu 22.04 image the builder starts from. Unset: the newest of family `" + cloud.UbuntuFamily +
					"` when the image is made, kept after (a newer vendor image does not replace this one)."},
			"versions": schema.SingleNestedAttribute{Optional: true, PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
				MarkdownDescription: "Software versions baked in, as in `gpucluster_node_bootstrap`; unset fields take its defaults. Give the pools that use the image the same.",
				Attributes: map[string]schema.Attribute{
					"driver":     schema.StringAttribute{Optional: true, MarkdownDescription: "NVIDIA data-centre driver."},
					"cuda":       schema.StringAttribute{Optional: true, MarkdownDescription: "CUDA toolkit `MAJOR.MINOR` (with `host_cuda`)."},
					"nccl":       schema.StringAttribute{Optional: true, MarkdownDescription: "NCCL `MAJOR.MINOR.PATCH` (with `host_cuda`)."},
					"kubernetes": schema.StringAttribute{Optional: true, MarkdownDescription: "Kubernetes `1.MINOR` or `1.MINOR.PATCH`."},
				}},
			"image_registry": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: replace,
				MarkdownDescription: "Registry the images are pulled from and containerd's mirrors point at, as the pools' `kubernetes.image_registry`. Unset: the region's default."},
			"package_mirror": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: replace,
				MarkdownDescription: packageMirrorDoc + " Unset: the region's default.",
				Validators:          []validator.String{stringvalidator.OneOf(bootstrap.PackageMirrors()...)}},
			"nvswitch": nodeImageNVSwitchAttribute(),
			"erdma":    nodeImageFlag("Install the eRDMA stack, for pools on an eRDMA network. Default `false`."),
			"host_cuda": nodeImageFlag("Install the CUDA toolkit and NCCL on the host (from the internet, several GB), as the pools' " +
				"`kubernetes.host_cuda`. Default `false`."),
			"nfs_client": nodeImageFlag("Install the NFS client, as pools with NAS or CPFS `mounts` do. Default `true`."),
			"images": schema.ListAttribute{Optional: true, Computed: true, ElementType: types.StringType,
				PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown(), listplanmodifier.RequiresReplace()},
				MarkdownDescription: "Container images pulled into the image, full references. Unset: what every GPU node runs before " +
					"any workload (the pause image, Flannel and its CNI plugin, the device plugin, DCGM exporter, node exporter) in `image_registry`; " +
					"for a `control_plane` image the pause image, Flannel and its CNI plugin and node exporter (kubeadm's images come with the role)."},
			"copy_to_regions": schema.ListAttribute{Optional: true, ElementType: types.StringType,
				PlanModifiers:       []planmodifier.List{listplanmodifier.RequiresReplace()},
				Validators:          []validator.List{listvalidator.UniqueValues()},
				MarkdownDescription: "Further regions to copy the image to (`CopyImage`); `copies` has their ids."},
			"tags": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Tags on the image, its copies and the builder. Changed in place on the image; the copies keep the tags they were copied with. Keys starting with `gpucluster:` are reserved."},
			"content_digest": schema.StringAttribute{Computed: true,
				MarkdownDescription: "Digest of what the image holds (the settings above with the provider's defaults filled in). A change replaces the image."},
			"copies": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				PlanModifiers:       []planmodifier.Map{mapplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "The copies' image ids by region."},
			"timeouts": nodeImageTimeouts(ctx),
		},
	}
}

// nodeImageTimeouts: a bake takes tens of minutes (driver and images), so create defaults to 2h.
func nodeImageTimeouts(ctx context.Context) schema.Attribute {
	attr := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Delete: true})
	if nested, ok := attr.(schema.SingleNestedAttribute); ok {
		nested.MarkdownDescription = "How long create (default 2h: the builder installs the NVIDIA stack and pulls the images) and delete " +
			"(default 30m) may take, as Go durations such as `\"90m\"`. A create cut short keeps its builder or image, which the next apply adopts."
		return nested
	}
	return attr
}

// nodeImageRoleAttribute: whose install phases the image holds.
func nodeImageRoleAttribute() schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(bootstrap.RoleGPUWorker),
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:    []validator.String{stringvalidator.OneOf(bootstrap.RoleGPUWorker, bootstrap.RoleControlPlane)},
		MarkdownDescription: "The nodes the image is for, as the pools' `kubernetes.role`: `gpu_worker` (default) or `control_plane`. " +
			"A control-plane image holds the control-plane nodes' install phases (the package mirror, containerd without the NVIDIA " +
			"toolkit, kubelet, kubeadm and kubectl) and kubeadm's control-plane images (kube-apiserver, kube-controller-manager, " +
			"kube-scheduler, kube-proxy, etcd, CoreDNS) at the release it installs, pulled from `image_registry`; no GPU software, " +
			"so `nvswitch` and `host_cuda` are refused with it and its builder is the catalog's smallest CPU type unless set."}
}

// nodeImageBuilderTypeAttribute: the builder's type, from the catalog when unset.
func nodeImageBuilderTypeAttribute() schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		MarkdownDescription: "Instance type of the builder: for a `gpu_worker` image a GPU type (the driver phase loads the driver and runs `nvidia-smi`), " +
			"an NVSwitch type when `nvswitch` is true (Fabric Manager starts only on an NVSwitch machine), with eRDMA interfaces when " +
			"`erdma` is true. Unset: the catalog's smallest GPU type that has what the image is baked for (fewest vCPUs, then least " +
			"memory; no type that needs an HPC cluster), and for a `control_plane` image the smallest CPU type. Set it to the type of " +
			"the pools the image is for to bake on the same hardware. " +
			"Changing it changes nothing baked, except `nvswitch` when that is unset."}
}

// nodeImageNVSwitchAttribute: Fabric Manager in the image, following the builder's type when unset.
func nodeImageNVSwitchAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, Computed: true,
		PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
		MarkdownDescription: "Install NVIDIA Fabric Manager at the driver's version, for NVSwitch types (the catalog's `nvswitch`). " +
			"Unset: whether `builder_instance_type` has NVSwitch (false when that is unset too). A change replaces the image (`content_digest`)."}
}

func nodeImageFlag(doc string) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, MarkdownDescription: doc,
		PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()}}
}

func (r *nodeImageResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg nodeImageModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	checkUserTags(cfg.Tags, maxUserTags, &resp.Diagnostics)
}

// ModifyPlan resolves the region's defaults, checks the settings as the bootstrap would and
// plans content_digest; a digest that differs from the state's (a new provider default) replaces
// the image.
func (r *nodeImageResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.client == nil {
		return
	}
	var plan, cfg nodeImageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	// Settings that come from something not known yet (unknown in the configuration, not just
	// unset) leave the plan to the apply.
	if resp.Diagnostics.HasError() || !fullyKnown(ctx, cfg.Role, cfg.ImageRegistry, cfg.Images, cfg.Versions, cfg.PackageMirror, cfg.BaseImageID,
		cfg.BuilderInstanceType, cfg.NVSwitch, cfg.ERDMA, cfg.HostCUDA, cfg.NFSClient) {
		return
	}
	region := r.client.Region()
	registry, warn := resolveImageRegistry(plan.ImageRegistry, region)
	addImageRegistryWarning(&resp.Diagnostics, path.Root("image_registry"), warn)
	plan.ImageRegistry = types.StringValue(registry)
	if plan.PackageMirror.IsUnknown() || plan.PackageMirror.IsNull() {
		plan.PackageMirror = types.StringValue(bootstrap.DefaultPackageMirror(region))
	}
	if !resolveBuilder(&plan, &cfg, &resp.Diagnostics) {
		return
	}
	b, d := plan.bakeOptions(ctx, region, registry, plan.PackageMirror.ValueString())
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, err := bootstrap.ValidateBake(b); err != nil {
		addPlanError(&resp.Diagnostics, err, "Node image settings")
		return
	}
	plan.Images = stringList(b.Images)
	plan.ContentDigest = types.StringValue(contentDigest(b, cfg.BaseImageID.ValueString()))
	if !req.State.Raw.IsNull() {
		var state nodeImageModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if state.ContentDigest.ValueString() != plan.ContentDigest.ValueString() {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("content_digest"))
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *nodeImageResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeImageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, nodeImageCreateTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spec, d := r.spec(ctx, &plan)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	res, err := nodeimage.Bake(ctx, r.client, spec)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Baking node image %s", plan.Name.ValueString()), err.Error())
		return
	}
	plan.ID = types.StringValue(res.ImageID)
	plan.BaseImageID = types.StringValue(spec.BaseImageID)
	plan.Copies = stringMap(res.Copies)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *nodeImageResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeImageModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	img, err := r.client.FindImage(ctx, "", state.ID.ValueString())
	if cloud.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading node image %s", state.ID.ValueString()), err.Error())
		return
	}
	if img.Status != cloud.ImageStatusAvailable {
		// A deprecated or broken image is no image to boot from: replace it.
		resp.State.RemoveResource(ctx)
		return
	}
	user := userTags(img.Tags)
	if len(user) > 0 || !state.Tags.IsNull() {
		state.Tags = stringMap(user)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update changes what an image's settings allow in place: its tags (and the builder type, which
// only a new bake would use).
func (r *nodeImageResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodeImageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	want, d := mapOf(ctx, plan.Tags)
	resp.Diagnostics.Append(d...)
	had, d := mapOf(ctx, state.Tags)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := retagImages(ctx, r.client, state.ID.ValueString(), had, want); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Tagging node image %s", state.ID.ValueString()), err.Error())
		return
	}
	plan.ID, plan.Copies, plan.BaseImageID = state.ID, state.Copies, state.BaseImageID
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *nodeImageResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeImageModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, nodeImageDeleteTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := deleteNodeImage(ctx, r.client, &state); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Deleting node image %s", state.ID.ValueString()), err.Error())
	}
}
