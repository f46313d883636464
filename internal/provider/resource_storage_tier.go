package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

var (
	_ resource.ResourceWithConfigure      = (*storageTierResource)(nil)
	_ resource.ResourceWithImportState    = (*storageTierResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*storageTierResource)(nil)
	_ resource.ResourceWithValidateConfig = (*storageTierResource)(nil)
)

// lifecycleRuleID names the one lifecycle rule the resource manages on its bucket.
const lifecycleRuleID = "gpucluster-tiering"

// The settings every bucket is held to; changed outside Terraform, they show in the next plan
// (bucket_acl, bucket_versioning, bucket_block_public_access) and the apply restores them.
const (
	bucketACLPrivate   = "private"
	bucketVersioningOn = "Enabled"
)

// Default timeouts: file systems take minutes to create and to extend.
const (
	storageCreateTimeout = 30 * time.Minute
	storageUpdateTimeout = 30 * time.Minute
	storageDeleteTimeout = 30 * time.Minute
)

// storageNamePattern is OSS's bucket naming rule (3-63 lowercase letters, digits and hyphens, no
// hyphen at either end), used for every tier so a name can move between tiers.
var storageNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)

func newStorageTierResource() resource.Resource { return &storageTierResource{} }

type storageTierResource struct {
	client *cloud.Client
}

func (r *storageTierResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_storage_tier"
}

func (r *storageTierResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	backendDoc := make([]string, 0, len(storageplan.BackendNames()))
	for _, n := range storageplan.BackendNames() {
		b, _ := storageplan.LookupBackend(n)
		backendDoc = append(backendDoc, fmt.Sprintf("`%s` (%s)", n, b.Title))
	}
	candidatesDoc := make([]string, 0, 3)
	for _, t := range storageplan.Tiers() {
		candidatesDoc = append(candidatesDoc, fmt.Sprintf("%s: `%s`", t, strings.Join(storageplan.Candidates(t), "`, `")))
	}
	intAttr := func(doc string) schema.Int64Attribute {
		return schema.Int64Attribute{Optional: true, MarkdownDescription: doc, Validators: []validator.Int64{int64validator.AtLeast(1)}}
	}
	computedString := func(doc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: doc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One storage tier of a GPU cluster. `hot` and `warm` tiers are NAS or CPFS file systems with a mount " +
			"target in the network's vSwitch; the `cold` tier is an OSS bucket (private ACL, versioning on, public access blocked, " +
			"server-side encryption) with lifecycle transitions and, optionally, an Alluxio cache in front of it.\n\n" +
			"Sizing uses only the vendor's published figures: CPFS advance_100 and advance_200 give 100 and 200 MB/s per TiB, " +
			"the NAS Capacity class reaches at most 10 GB/s (best zones), ESSD PL3 gives min(1800 + 50 x GiB, 1,000,000) IOPS from " +
			"1,261 GiB. Where the vendor publishes no formula (Extreme and general-purpose NAS throughput, every file system's IOPS, " +
			"OSS) the expected figure is left unknown (null) and `sizing_notes` says so; a target that cannot be verified is a " +
			"warning, a target that no backend can meet is a plan-time error naming the best reachable figure.\n\n" +
			"Import by id: the file system id (hot and warm tiers) or the bucket name (cold tier).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The file system id (hot, warm) or the bucket name (cold).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the tier: 3-63 lowercase letters, digits and hyphens. The bucket's name for the cold tier " +
					"(so it must be globally unique, and changing it replaces the bucket); the file system's description " +
					"otherwise (updated in place). Also the mount point, `/mnt/<name>`.",
				Validators: []validator.String{stringvalidator.RegexMatches(storageNamePattern,
					"must be 3-63 lowercase letters, digits and hyphens, not starting or ending with a hyphen")},
			},
			"tier": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "`" + strings.Join(storageplan.Tiers(), "`, `") + "`. Changing it replaces the tier.",
				Validators:          []validator.String{stringvalidator.OneOf(storageplan.Tiers()...)},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"network_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Id of the `gpucluster_rdma_network` (its security group id) whose VPC and vSwitch get the mount " +
					"target: the VPC is the security group's, the vSwitch the first (by zone) tagged `gpucluster:network-id = <network_id>`. " +
					"Required for hot and warm tiers unless `vswitch_id` is given; not used by the cold tier. Changing it replaces the tier.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"vpc_id": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "VPC of the mount target. Resolved from `network_id` or `vswitch_id` when left out; when given it " +
					"must be the vSwitch's VPC. Changing it replaces the tier.",
			},
			"vswitch_id": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "vSwitch of the mount target (its zone is the file system's). Overrides the vSwitch found from " +
					"`network_id`. Changing it replaces the tier.",
			},
			"zone_id": computedString("Zone of the file system: the vSwitch's zone."),
			"capacity_tib": schema.Int64Attribute{
				Required: true,
				MarkdownDescription: "Capacity asked for, TiB. Sizing may provision more to meet `min_throughput_gbps` " +
					"(see `provisioned_capacity_tib`). Extreme and CPFS file systems are created at that size and grow in place " +
					"(UpgradeFileSystem); a smaller provisioned size replaces them. General-purpose NAS is elastic and OSS has no " +
					"size, so there it only feeds sizing and changes in place.",
				Validators: []validator.Int64{int64validator.AtLeast(1)},
			},
			"min_throughput_gbps": schema.Float64Attribute{
				Optional: true,
				MarkdownDescription: "Throughput target, GB/s (gigabytes per second, 1 GB/s = 1,000 MB/s), aggregate for the file " +
					"system. Capacity is raised, or the next backend picked, to meet it.",
				Validators: []validator.Float64{float64validator.AtLeast(0.001)},
			},
			"min_iops": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "IOPS target. The vendor publishes no IOPS formula for NAS, CPFS or OSS; on the hot tier it is " +
					"met per node by node-local ESSD PL3 (`data_disk_hint`), and above one PL3 disk's 1,000,000 IOPS it is a " +
					"plan-time error. On other tiers it is a warning that it cannot be verified.",
				Validators: []validator.Int64{int64validator.AtLeast(1)},
			},
			"backend": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Storage backend, one of " + strings.Join(backendDoc, ", ") + ". When left out it is chosen " +
					"per tier (" + strings.Join(candidatesDoc, "; ") + "): the first that meets the targets at `capacity_tib`, " +
					"else the one that needs the least extra capacity, else the first whose figures are unknown. The cold tier " +
					"is always `oss`. Changing it replaces the tier.",
				Validators: []validator.String{stringvalidator.OneOf(storageplan.BackendNames()...)},
			},
			"encryption": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Encryption at rest: NAS-managed keys for file systems (fixed at creation: changing it replaces " +
					"them), AES256 server-side encryption for buckets (changed in place). Default `true`.",
			},
			"object_lifecycle": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Cold tier only: days after an object's last modification at which it moves to IA, Archive, " +
					"ColdArchive, and expires. Steps must come in that order, each on a later day, and respect the minimum storage " +
					"durations (IA 30 days, counted from the transition; Archive 60 days from the last modification; ColdArchive " +
					"180 days from the transition); anything else is a plan-time error. Kept as one rule `" + lifecycleRuleID +
					"` over the whole bucket; changed behind Terraform's back, it shows in the next plan and is restored.",
				Attributes: map[string]schema.Attribute{
					"ia_after_days":           intAttr("Days until the move to IA (Infrequent Access)."),
					"archive_after_days":      intAttr("Days until the move to Archive."),
					"cold_archive_after_days": intAttr("Days until the move to ColdArchive."),
					"expire_after_days":       intAttr("Days until the object is deleted (a delete marker, the bucket being versioned)."),
				},
			},
			"cache": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Cold tier only: a cache near the GPUs in front of the bucket. Rendered into `alluxio_properties`.",
				Attributes: map[string]schema.Attribute{
					"engine": schema.StringAttribute{
						Optional: true, Computed: true, Default: stringdefault.StaticString(storageplan.CacheEngineAlluxio),
						MarkdownDescription: "Cache engine: `" + strings.Join(storageplan.CacheEngines(), "`, `") + "`.",
						Validators:          []validator.String{stringvalidator.OneOf(storageplan.CacheEngines()...)},
					},
					"size_gib": schema.Int64Attribute{
						Required:            true,
						MarkdownDescription: "Cache size per worker, GiB (the worker tier's quota).",
						Validators:          []validator.Int64{int64validator.AtLeast(1)},
					},
					"target_hit_rate": schema.Float64Attribute{
						Optional: true, Computed: true, Default: float64default.StaticFloat64(0.9),
						MarkdownDescription: "Hit rate the cache is sized for, 0-1. Default 0.9.",
						Validators:          []validator.Float64{float64validator.Between(0.01, 1)},
					},
					"hot_dataset_gib": schema.Int64Attribute{
						Optional: true,
						MarkdownDescription: "Size of the data read repeatedly (the working set), GiB. With it, a cache below " +
							"`hot_dataset_gib x target_hit_rate` is a plan-time warning (model: hit rate ~ cache / working set; " +
							"the vendor publishes no formula).",
						Validators: []validator.Int64{int64validator.AtLeast(1)},
					},
				},
			},
			"tags": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: fmt.Sprintf("Tags of the file system or bucket, at most %d. Updated in place. Keys starting "+
					"with `gpucluster:` are reserved: the provider adds `%s` and `%s = <name>`, which let a later apply adopt "+
					"what an interrupted one created.", maxUserTags, tagManagedBy, tagStorageTier),
			},
			"force_destroy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Cold tier: delete every object version with the bucket. Without it, destroying a bucket " +
					"that holds objects fails with a message. Default `false`.",
			},
			"timeouts": timeoutsAttribute(ctx),

			"provisioned_capacity_tib": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "Capacity provisioned, TiB: `capacity_tib`, or more when a throughput target needs it.",
			},
			"expected_throughput_gbps": schema.Float64Attribute{
				Computed:            true,
				MarkdownDescription: "Expected throughput, GB/s, from the vendor's formula; null when the vendor publishes none.",
			},
			"expected_iops": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "Expected IOPS of the file system or bucket; null when the vendor publishes no formula (the case for every backend today: see `data_disk_hint`).",
			},
			"sizing_notes": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "How the backend and capacity were chosen, the formulas used, and every figure that is unknown.",
			},
			"file_system_id": computedString("NAS or CPFS file system id (hot, warm)."),
			"bucket":         computedString("OSS bucket name (cold)."),
			"mount_target":   computedString("Mount target domain of the file system."),
			"mount_command":  computedString("Shell command that mounts the file system at `/mnt/<name>` with NFS options for large sequential reads (NFSv3, 1 MiB rsize/wsize, hard)."),
			"fstab_line":     computedString("The same mount as an `/etc/fstab` line."),
			"alluxio_properties": computedString("Cold tier with `cache`: an `alluxio-site.properties` mounting the bucket as Alluxio's root " +
				"with the worker cache sized to `cache.size_gib`. Carries no credentials."),
			"bucket_acl": computedString("Cold tier: the bucket's ACL, always `" + bucketACLPrivate + "`. Changed outside " +
				"Terraform, the next plan shows it and the apply restores it."),
			"bucket_versioning": computedString("Cold tier: the bucket's versioning status, always `" + bucketVersioningOn +
				"`. Changed outside Terraform (suspended), the next plan shows it and the apply restores it."),
			"bucket_block_public_access": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Cold tier: whether the bucket blocks public access, always `true`. Changed outside " +
					"Terraform, the next plan shows it and the apply restores it.",
			},
			"data_disk_hint": schema.SingleNestedAttribute{
				Computed: true,
				MarkdownDescription: "Hot tier: the node-local ESSD PL3 data disk per node that reaches `min_iops`, in the terms of " +
					"`gpucluster_node_pool.data_disks` (PL3 starts at 1,261 GiB).",
				Attributes: map[string]schema.Attribute{
					"category":          schema.StringAttribute{Computed: true, MarkdownDescription: "Disk category, `cloud_essd`."},
					"performance_level": schema.StringAttribute{Computed: true, MarkdownDescription: "ESSD performance level, `PL3`."},
					"size_gib":          schema.Int64Attribute{Computed: true, MarkdownDescription: "Size per node, GiB."},
					"iops":              schema.Int64Attribute{Computed: true, MarkdownDescription: "IOPS of that disk: min(1800 + 50 x GiB, 1,000,000)."},
					"throughput_mbps":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Throughput of that disk, MB/s: min(120 + 0.5 x GiB, 4,000)."},
				},
			},
		},
	}
}

func (r *storageTierResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *storageTierResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan storageTierModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.client == nil {
		resp.Diagnostics.AddError("Creating storage tier: provider not configured", "The provider was not configured; this is a bug.")
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, storageCreateTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	backend, _ := storageplan.LookupBackend(plan.Backend.ValueString())
	name := plan.Name.ValueString()
	tags := tierStringMap(ctx, plan.Tags, &resp.Diagnostics)

	if backend.Object {
		what := fmt.Sprintf("Creating storage tier %s (bucket %s)", name, name)
		adopted, err := r.adoptBucket(ctx, name, tags, plan.Encryption.ValueBool())
		if err != nil {
			resp.Diagnostics.AddError(what, err.Error())
			return
		}
		if adopted {
			resp.Diagnostics.AddWarning(fmt.Sprintf("Storage tier %s: adopted bucket %s", name, name),
				"The bucket already existed, left by an earlier apply that was interrupted before it saved the state; it was "+
					"adopted and brought to this configuration instead of being created again.")
		} else if err := r.client.CreateBucket(ctx, cloud.BucketInput{Name: name, Encrypted: plan.Encryption.ValueBool(),
			Tags: storageTags(name, tags)}); err != nil {
			resp.Diagnostics.AddError(what, err.Error())
			return
		}
		// The id goes to the state before anything else can fail, so a failure leaves a tainted
		// resource, not a leaked bucket.
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
		if err := r.client.PutLifecycleRule(ctx, name, lifecycleRuleOf(ctx, plan.ObjectLifecycle, &resp.Diagnostics)); err != nil {
			resp.Diagnostics.AddError(what+": lifecycle", err.Error())
			return
		}
		plan.ID = types.StringValue(name)
		plan.Bucket = types.StringValue(name)
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
		return
	}

	net, err := resolveStorageNetwork(ctx, r.client, plan.NetworkID.ValueString(), plan.VpcID.ValueString(), plan.VSwitchID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s: resolving its network", name), err.Error())
		return
	}
	in := cloud.FileSystemInput{
		FileSystemType: backend.FileSystemType, StorageType: backend.StorageType, ProtocolType: backend.ProtocolType,
		ZoneID: net.ZoneID, VpcID: net.VpcID, VSwitchID: net.VSwitchID, Description: name,
		Encrypted: plan.Encryption.ValueBool(),
	}
	if backend.SendsCapacity {
		in.CapacityGiB = plan.ProvisionedCapacityTiB.ValueInt64() * storageplan.GiBPerTiB
	}
	id, haveTags, adopted, err := r.createOrAdoptFileSystem(ctx, plan.Tier.ValueString(), backend, in)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s (%s file system)", name, backend.Title), err.Error())
		return
	}
	if adopted {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Storage tier %s: adopted file system %s", name, id),
			fmt.Sprintf("File system %s carries the tags %s = %s and %s = %s and matches this configuration: it was left by an "+
				"earlier apply that was interrupted before it saved the state, and was adopted instead of creating another.",
				id, tagManagedBy, managedByVal, tagStorageTier, name))
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	// Tags first, while nothing else can have failed yet: from here on a later run can find it.
	if err := r.client.SyncTags(ctx, cloud.KindFileSystem, []string{id}, haveTags, storageTags(name, tags)); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s (%s): tags", name, id), err.Error())
		return
	}
	fs, err := r.client.WaitFileSystemRunning(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s (%s)", name, id), err.Error())
		return
	}
	if adopted {
		if fs.Description != name {
			if err := r.client.SetFileSystemDescription(ctx, id, name); err != nil {
				resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s (%s)", name, id), err.Error())
				return
			}
		}
		if backend.SendsCapacity && fs.CapacityGiB < in.CapacityGiB {
			if err := r.client.UpgradeFileSystem(ctx, id, in.CapacityGiB, upgradeClientToken(id, in.CapacityGiB)); err != nil {
				resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s (%s)", name, id), err.Error())
				return
			}
		}
	}
	domain, err := r.mountTargetIn(ctx, id, net)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s (%s): mount target", name, id), err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("mount_target"), domain)...)
	if _, err := r.client.WaitMountTargetActive(ctx, id, domain); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating storage tier %s (%s): mount target", name, id), err.Error())
		return
	}
	plan.ID = types.StringValue(id)
	plan.FileSystemID = types.StringValue(id)
	plan.VpcID = types.StringValue(net.VpcID)
	plan.VSwitchID = types.StringValue(net.VSwitchID)
	plan.ZoneID = types.StringValue(net.ZoneID)
	plan.MountTarget = types.StringValue(domain)
	plan.setMount(backend)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *storageTierResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state storageTierModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.client == nil {
		resp.Diagnostics.AddError("Reading storage tier: provider not configured", "The provider was not configured; this is a bug.")
		return
	}
	id := state.ID.ValueString()
	object := false
	if b, ok := storageplan.LookupBackend(state.Backend.ValueString()); ok {
		object = b.Object
	} else {
		// Import: the id alone says nothing; a file system id is looked for first.
		_, err := r.client.FindFileSystem(ctx, id)
		switch {
		case cloud.IsNotFound(err):
			object = true
		case err != nil:
			resp.Diagnostics.AddError(fmt.Sprintf("Reading storage tier %s", id), err.Error())
			return
		}
	}
	var gone bool
	var diags diag.Diagnostics
	if object {
		gone, diags = r.readBucket(ctx, id, &state)
	} else {
		gone, diags = r.readFileSystem(ctx, id, &state)
	}
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if gone {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Storage tier %s (%s) is gone", state.Name.ValueString(), id),
			"It was deleted outside Terraform and has been removed from the state; the next apply creates it again.")
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *storageTierResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior storageTierModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.client == nil {
		resp.Diagnostics.AddError("Updating storage tier: provider not configured", "The provider was not configured; this is a bug.")
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, storageUpdateTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := prior.ID.ValueString()
	what := fmt.Sprintf("Updating storage tier %s (%s)", plan.Name.ValueString(), id)
	backend, _ := storageplan.LookupBackend(plan.Backend.ValueString())
	oldTags := tierStringMap(ctx, prior.Tags, &resp.Diagnostics)
	newTags := tierStringMap(ctx, plan.Tags, &resp.Diagnostics)
	tagsChanged := !plan.Tags.Equal(prior.Tags) && !(len(oldTags) == 0 && len(newTags) == 0)

	if backend.Object {
		if !plan.BucketACL.Equal(prior.BucketACL) || !plan.BucketVersioning.Equal(prior.BucketVersioning) ||
			!plan.BucketBlockPublic.Equal(prior.BucketBlockPublic) {
			// Changed outside Terraform: back to private, versioned, public access blocked.
			if err := r.client.ApplyBucketSettings(ctx, id, plan.Encryption.ValueBool()); err != nil {
				resp.Diagnostics.AddError(what, err.Error())
				return
			}
		}
		if !plan.ObjectLifecycle.Equal(prior.ObjectLifecycle) {
			if err := r.client.PutLifecycleRule(ctx, id, lifecycleRuleOf(ctx, plan.ObjectLifecycle, &resp.Diagnostics)); err != nil {
				resp.Diagnostics.AddError(what, err.Error())
				return
			}
		}
		if !plan.Encryption.Equal(prior.Encryption) {
			if err := r.client.SetBucketEncryption(ctx, id, plan.Encryption.ValueBool()); err != nil {
				resp.Diagnostics.AddError(what, err.Error())
				return
			}
		}
		if tagsChanged {
			if err := r.client.SetBucketTags(ctx, id, storageTags(plan.Name.ValueString(), newTags)); err != nil {
				resp.Diagnostics.AddError(what, err.Error())
				return
			}
		}
	} else {
		if !plan.Name.Equal(prior.Name) {
			if err := r.client.SetFileSystemDescription(ctx, id, plan.Name.ValueString()); err != nil {
				resp.Diagnostics.AddError(what, err.Error())
				return
			}
		}
		if want := plan.ProvisionedCapacityTiB.ValueInt64(); backend.SendsCapacity && want > prior.ProvisionedCapacityTiB.ValueInt64() {
			if err := r.client.UpgradeFileSystem(ctx, id, want*storageplan.GiBPerTiB, upgradeClientToken(id, want*storageplan.GiBPerTiB)); err != nil {
				resp.Diagnostics.AddError(what, err.Error())
				return
			}
		}
		if tagsChanged || !plan.Name.Equal(prior.Name) {
			// The name rides on the gpucluster:storage-tier tag too.
			err := r.client.SyncTags(ctx, cloud.KindFileSystem, []string{id}, storageTags(prior.Name.ValueString(), oldTags), storageTags(plan.Name.ValueString(), newTags))
			if err != nil {
				resp.Diagnostics.AddError(what, err.Error())
				return
			}
		}
		plan.setMount(backend)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *storageTierResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state storageTierModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.client == nil {
		resp.Diagnostics.AddError("Deleting storage tier: provider not configured", "The provider was not configured; this is a bug.")
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, storageDeleteTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := state.ID.ValueString()
	what := fmt.Sprintf("Deleting storage tier %s (%s)", state.Name.ValueString(), id)
	backend, _ := storageplan.LookupBackend(state.Backend.ValueString())
	if !backend.Object {
		if err := r.client.DeleteFileSystem(ctx, id); err != nil {
			resp.Diagnostics.AddError(what, err.Error())
		}
		return
	}
	if !state.ForceDestroy.ValueBool() {
		some, err := r.client.ListObjectVersions(ctx, id, 1)
		if cloud.IsNotFound(err) {
			return
		}
		if err != nil {
			resp.Diagnostics.AddError(what, err.Error())
			return
		}
		if len(some) > 0 {
			resp.Diagnostics.AddError(what+": the bucket is not empty",
				fmt.Sprintf("Bucket %s still holds objects (for example %q), and force_destroy is false, so nothing was deleted. "+
					"Move or delete the data first, or set force_destroy = true and apply before destroying to delete every object "+
					"version with the bucket.", id, some[0].Key))
			return
		}
	} else if err := r.client.EmptyBucket(ctx, id); err != nil && !cloud.IsNotFound(err) {
		resp.Diagnostics.AddError(what, err.Error())
		return
	}
	if err := r.client.DeleteBucket(ctx, id); err != nil {
		resp.Diagnostics.AddError(what, err.Error())
	}
}

func (r *storageTierResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("encryption"), true)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
}

// ConfigValidators: nothing across attributes that ValidateConfig does not say better.
func (r *storageTierResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return nil
}

// ValidateConfig refuses, before anything is planned, what cannot work whatever the cloud holds:
// a lifecycle or a cache on a file-system tier, a lifecycle out of order, a hot or warm tier with
// no network, a backend that does not serve the tier.
func (r *storageTierResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg storageTierModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || cfg.Tier.IsUnknown() || cfg.Tier.IsNull() {
		return
	}
	if !cfg.Tags.IsUnknown() && !cfg.Tags.IsNull() {
		elems := cfg.Tags.Elements()
		if len(elems) > maxUserTags {
			resp.Diagnostics.AddAttributeError(path.Root("tags"), "Too many tags",
				fmt.Sprintf("%d tags given; a storage tier takes at most %d, leaving room for the provider's own within the service's 20.", len(elems), maxUserTags))
		}
		for k := range elems {
			if strings.HasPrefix(k, tagPrefix) {
				resp.Diagnostics.AddAttributeError(path.Root("tags").AtMapKey(k), "Reserved tag key",
					fmt.Sprintf("Tag key %q starts with %q, which the provider reserves for the tags it sets itself (%s, %s): choose another key.", k, tagPrefix, tagManagedBy, tagStorageTier))
			}
		}
	}
	tier := cfg.Tier.ValueString()
	if tier != storageplan.TierCold {
		if !cfg.ObjectLifecycle.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("object_lifecycle"), "object_lifecycle on a file-system tier",
				fmt.Sprintf("tier = %q is a file system; lifecycle transitions are for the cold tier's bucket. Remove object_lifecycle, or use tier = \"cold\".", tier))
		}
		if !cfg.Cache.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("cache"), "cache on a non-cold tier",
				fmt.Sprintf("tier = %q already sits near the GPUs; the cache (Alluxio) fronts the cold tier's bucket. Remove cache, or use tier = \"cold\".", tier))
		}
		if cfg.NetworkID.IsNull() && cfg.VSwitchID.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("network_id"), "No network for the mount target",
				fmt.Sprintf("tier = %q is a file system mounted over the VPC: set network_id (a gpucluster_rdma_network id) or vswitch_id.", tier))
		}
	}
	if !cfg.Backend.IsNull() && !cfg.Backend.IsUnknown() {
		if b, ok := storageplan.LookupBackend(cfg.Backend.ValueString()); ok && b.Object != (tier == storageplan.TierCold) {
			resp.Diagnostics.AddAttributeError(path.Root("backend"), "Backend does not serve this tier",
				fmt.Sprintf("backend = %q cannot hold the %s tier: the cold tier is %q only; hot and warm tiers take a file system (%s).",
					b.Name, tier, storageplan.BackendOSS, strings.Join(append(storageplan.Candidates(storageplan.TierHot), storageplan.Candidates(storageplan.TierWarm)...), ", ")))
		}
	}
	if l, known := lifecycleOf(ctx, cfg.ObjectLifecycle, &resp.Diagnostics); known && l != nil {
		if err := l.Validate(); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("object_lifecycle"), "Invalid object lifecycle", err.Error())
		}
	}
}

// ModifyPlan sizes the tier, fills the computed attributes, and marks what needs a replacement.
func (r *storageTierResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, cfg storageTierModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior *storageTierModel
	if !req.State.Raw.IsNull() {
		prior = &storageTierModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, prior)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if plan.Tier.IsUnknown() || cfg.Backend.IsUnknown() || plan.CapacityTiB.IsUnknown() || plan.MinThroughputGBps.IsUnknown() ||
		plan.MinIOPS.IsUnknown() || plan.Name.IsUnknown() || plan.Cache.IsUnknown() {
		return // sized once the values are known
	}
	sizeReq := storageplan.Request{
		Tier: plan.Tier.ValueString(), Backend: cfg.Backend.ValueString(), CapacityTiB: plan.CapacityTiB.ValueInt64(),
		MinThroughputGBps: plan.MinThroughputGBps.ValueFloat64(), MinIOPS: plan.MinIOPS.ValueInt64(),
	}
	sized, err := storageplan.Size(sizeReq)
	if prior != nil && cfg.Backend.IsNull() && prior.Tier.Equal(plan.Tier) && prior.Backend.ValueString() != "" &&
		(err != nil || sized.Backend.Name != prior.Backend.ValueString()) {
		// An existing tier keeps its backend while that backend still meets the targets: growing
		// a CPFS advance_200 file system must not turn into a replacement by advance_100 just
		// because the larger size lets the lower class meet the target too.
		keep := sizeReq
		keep.Backend = prior.Backend.ValueString()
		if p, kerr := storageplan.Size(keep); kerr == nil && len(p.Warnings) == 0 {
			sized, err = p, nil
			sized.Notes = append([]string{fmt.Sprintf("backend %s kept: the existing tier still meets the targets on it", keep.Backend)}, sized.Notes...)
		}
	}
	if err != nil {
		attrPath := path.Root("capacity_tib")
		switch {
		case strings.Contains(err.Error(), "min_iops"):
			attrPath = path.Root("min_iops")
		case strings.Contains(err.Error(), "min_throughput_gbps"):
			attrPath = path.Root("min_throughput_gbps")
		case strings.Contains(err.Error(), "backend"):
			attrPath = path.Root("backend")
		}
		resp.Diagnostics.AddAttributeError(attrPath, fmt.Sprintf("Sizing storage tier %s: target cannot be met", plan.Name.ValueString()), err.Error())
		return
	}
	notes := sized.Notes
	for _, w := range sized.Warnings {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Sizing storage tier %s", plan.Name.ValueString()), w)
	}
	cache, cacheKnown := cacheOf(ctx, plan.Cache, &resp.Diagnostics)
	if cacheKnown && cache != nil {
		n, w := storageplan.SizeCache(*cache)
		notes = append(notes, n...)
		for _, msg := range w {
			resp.Diagnostics.AddAttributeWarning(path.Root("cache").AtName("size_gib"), fmt.Sprintf("Sizing the cache of storage tier %s", plan.Name.ValueString()), msg)
		}
	}
	if sized.Backend.Object {
		notes = append(notes, fmt.Sprintf("OSS publishes no capacity limit per bucket in the vendor's figures; capacity_tib = %d only informs sizing", plan.CapacityTiB.ValueInt64()))
	}

	plan.Backend = types.StringValue(sized.Backend.Name)
	plan.ProvisionedCapacityTiB = types.Int64Value(sized.CapacityTiB)
	plan.ExpectedThroughputGBps = types.Float64PointerValue(sized.ThroughputGBps)
	plan.ExpectedIOPS = types.Int64PointerValue(sized.IOPS)
	plan.SizingNotes = stringList(notes)
	plan.DataDiskHint = diskHintValue(sized.DiskHint)

	// What needs a replacement.
	var replace []path.Path
	if prior != nil {
		if prior.Backend.ValueString() != "" && prior.Backend.ValueString() != sized.Backend.Name {
			replace = append(replace, path.Root("backend"))
		}
		if sized.Backend.SendsCapacity && sized.CapacityTiB < prior.ProvisionedCapacityTiB.ValueInt64() {
			replace = append(replace, path.Root("capacity_tib"))
		}
		if sized.Backend.Object && !plan.Name.Equal(prior.Name) {
			replace = append(replace, path.Root("name"))
		}
		if !sized.Backend.Object && !plan.Encryption.Equal(prior.Encryption) {
			replace = append(replace, path.Root("encryption"))
		}
		for _, p := range []struct {
			name      string
			cfg, prev types.String
		}{{"vpc_id", cfg.VpcID, prior.VpcID}, {"vswitch_id", cfg.VSwitchID, prior.VSwitchID}} {
			if !p.cfg.IsNull() && !p.cfg.Equal(p.prev) {
				replace = append(replace, path.Root(p.name))
			}
		}
	}
	resp.RequiresReplace = append(resp.RequiresReplace, replace...)
	fresh := prior == nil || len(replace) > 0

	name := plan.Name.ValueString()
	plan.BucketACL, plan.BucketVersioning, plan.BucketBlockPublic = types.StringNull(), types.StringNull(), types.BoolNull()
	if sized.Backend.Object {
		plan.ID = types.StringValue(name)
		plan.Bucket = types.StringValue(name)
		plan.BucketACL = types.StringValue(bucketACLPrivate)
		plan.BucketVersioning = types.StringValue(bucketVersioningOn)
		plan.BucketBlockPublic = types.BoolValue(true)
		for _, s := range []*types.String{&plan.FileSystemID, &plan.MountTarget, &plan.MountCommand, &plan.FstabLine, &plan.ZoneID} {
			*s = types.StringNull()
		}
		if cfg.VpcID.IsNull() {
			plan.VpcID = types.StringNull()
		}
		if cfg.VSwitchID.IsNull() {
			plan.VSwitchID = types.StringNull()
		}
		plan.AlluxioProperties = types.StringNull()
		if cacheKnown && cache != nil {
			plan.AlluxioProperties = types.StringValue(storageplan.AlluxioProperties(name, r.region(), *cache))
		} else if !cacheKnown {
			plan.AlluxioProperties = types.StringUnknown()
		}
	} else {
		plan.Bucket = types.StringNull()
		plan.AlluxioProperties = types.StringNull()
		if fresh {
			for _, s := range []*types.String{&plan.ID, &plan.FileSystemID, &plan.MountTarget, &plan.MountCommand, &plan.FstabLine, &plan.ZoneID} {
				*s = types.StringUnknown()
			}
			if cfg.VpcID.IsNull() {
				plan.VpcID = types.StringUnknown()
			}
			if cfg.VSwitchID.IsNull() {
				plan.VSwitchID = types.StringUnknown()
			}
		} else {
			plan.ID, plan.FileSystemID, plan.MountTarget, plan.ZoneID = prior.ID, prior.FileSystemID, prior.MountTarget, prior.ZoneID
			plan.VpcID, plan.VSwitchID = prior.VpcID, prior.VSwitchID
			plan.setMount(sized.Backend)
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

func (r *storageTierResource) region() string {
	if r.client == nil {
		return ""
	}
	return r.client.Region()
}

// storageTierModel is the resource's data.
type storageTierModel struct {
	ID                     types.String   `tfsdk:"id"`
	Name                   types.String   `tfsdk:"name"`
	Tier                   types.String   `tfsdk:"tier"`
	NetworkID              types.String   `tfsdk:"network_id"`
	VpcID                  types.String   `tfsdk:"vpc_id"`
	VSwitchID              types.String   `tfsdk:"vswitch_id"`
	ZoneID                 types.String   `tfsdk:"zone_id"`
	CapacityTiB            types.Int64    `tfsdk:"capacity_tib"`
	MinThroughputGBps      types.Float64  `tfsdk:"min_throughput_gbps"`
	MinIOPS                types.Int64    `tfsdk:"min_iops"`
	Backend                types.String   `tfsdk:"backend"`
	Encryption             types.Bool     `tfsdk:"encryption"`
	ObjectLifecycle        types.Object   `tfsdk:"object_lifecycle"`
	Cache                  types.Object   `tfsdk:"cache"`
	Tags                   types.Map      `tfsdk:"tags"`
	ForceDestroy           types.Bool     `tfsdk:"force_destroy"`
	Timeouts               timeouts.Value `tfsdk:"timeouts"`
	ProvisionedCapacityTiB types.Int64    `tfsdk:"provisioned_capacity_tib"`
	ExpectedThroughputGBps types.Float64  `tfsdk:"expected_throughput_gbps"`
	ExpectedIOPS           types.Int64    `tfsdk:"expected_iops"`
	SizingNotes            types.List     `tfsdk:"sizing_notes"`
	FileSystemID           types.String   `tfsdk:"file_system_id"`
	Bucket                 types.String   `tfsdk:"bucket"`
	MountTarget            types.String   `tfsdk:"mount_target"`
	MountCommand           types.String   `tfsdk:"mount_command"`
	FstabLine              types.String   `tfsdk:"fstab_line"`
	AlluxioProperties      types.String   `tfsdk:"alluxio_properties"`
	BucketACL              types.String   `tfsdk:"bucket_acl"`
	BucketVersioning       types.String   `tfsdk:"bucket_versioning"`
	BucketBlockPublic      types.Bool     `tfsdk:"bucket_block_public_access"`
	DataDiskHint           types.Object   `tfsdk:"data_disk_hint"`
}

type lifecycleModel struct {
	IA          types.Int64 `tfsdk:"ia_after_days"`
	Archive     types.Int64 `tfsdk:"archive_after_days"`
	ColdArchive types.Int64 `tfsdk:"cold_archive_after_days"`
	Expire      types.Int64 `tfsdk:"expire_after_days"`
}

type cacheModel struct {
	Engine        types.String  `tfsdk:"engine"`
	SizeGiB       types.Int64   `tfsdk:"size_gib"`
	TargetHitRate types.Float64 `tfsdk:"target_hit_rate"`
	HotDatasetGiB types.Int64   `tfsdk:"hot_dataset_gib"`
}

var (
	lifecycleAttrTypes = map[string]attr.Type{
		"ia_after_days": types.Int64Type, "archive_after_days": types.Int64Type,
		"cold_archive_after_days": types.Int64Type, "expire_after_days": types.Int64Type,
	}
	diskHintAttrTypes = map[string]attr.Type{
		"category": types.StringType, "performance_level": types.StringType, "size_gib": types.Int64Type,
		"iops": types.Int64Type, "throughput_mbps": types.Int64Type,
	}
)

// setMount renders mount_command and fstab_line from the mount target, or unknown without one.
func (m *storageTierModel) setMount(b storageplan.Backend) {
	if m.MountTarget.IsNull() || m.MountTarget.IsUnknown() || m.MountTarget.ValueString() == "" {
		m.MountCommand, m.FstabLine = types.StringNull(), types.StringNull()
		if m.MountTarget.IsUnknown() {
			m.MountCommand, m.FstabLine = types.StringUnknown(), types.StringUnknown()
		}
		return
	}
	domain, name := m.MountTarget.ValueString(), m.Name.ValueString()
	m.MountCommand = types.StringValue(storageplan.MountCommand(b, domain, name))
	m.FstabLine = types.StringValue(storageplan.FstabLine(b, domain, name))
}

// readFileSystem refreshes a hot or warm tier; gone reports a file system deleted outside.
func (r *storageTierResource) readFileSystem(ctx context.Context, id string, m *storageTierModel) (gone bool, diags diag.Diagnostics) {
	fs, err := r.client.FindFileSystem(ctx, id)
	if cloud.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		diags.AddError(fmt.Sprintf("Reading storage tier %s (%s)", m.Name.ValueString(), id), err.Error())
		return false, diags
	}
	name := storageplan.BackendFor(fs.Type, fs.StorageType)
	b, ok := storageplan.LookupBackend(name)
	if !ok {
		diags.AddError(fmt.Sprintf("Reading storage tier (%s)", id),
			fmt.Sprintf("File system %s is %s/%s, which no backend of this resource creates: import a file system made by gpucluster_storage_tier.", id, fs.Type, fs.StorageType))
		return false, diags
	}
	m.ID = types.StringValue(fs.ID)
	m.FileSystemID = types.StringValue(fs.ID)
	m.Bucket = types.StringNull()
	m.Backend = types.StringValue(b.Name)
	if m.Tier.IsNull() {
		m.Tier = types.StringValue(storageplan.TierOf(b.Name))
	}
	m.Name = types.StringValue(fs.Description)
	m.Encryption = types.BoolValue(fs.Encrypted)
	m.ZoneID = types.StringValue(fs.ZoneID)
	if b.SendsCapacity {
		m.ProvisionedCapacityTiB = types.Int64Value(fs.CapacityGiB / storageplan.GiBPerTiB)
	}
	if m.CapacityTiB.IsNull() { // import
		m.CapacityTiB = m.ProvisionedCapacityTiB
	}
	targets, err := r.client.FindMountTargets(ctx, id)
	if err != nil && !cloud.IsNotFound(err) {
		diags.AddError(fmt.Sprintf("Reading storage tier %s (%s): mount targets", m.Name.ValueString(), id), err.Error())
		return false, diags
	}
	var mt *struct{ domain, vpc, vsw string }
	for _, t := range targets {
		if mt == nil || t.Domain == m.MountTarget.ValueString() {
			mt = &struct{ domain, vpc, vsw string }{t.Domain, t.VPCID, t.VSwitchID}
		}
	}
	if mt != nil {
		m.MountTarget, m.VpcID, m.VSwitchID = types.StringValue(mt.domain), types.StringValue(mt.vpc), types.StringValue(mt.vsw)
	} else {
		m.MountTarget = types.StringNull()
		if fs.VPCID != "" {
			m.VpcID = types.StringValue(fs.VPCID)
		}
	}
	m.setMount(b)
	if tags := userTags(fs.Tags); len(tags) > 0 || !m.Tags.IsNull() {
		m.Tags = stringMap(tags)
	}
	m.BucketACL, m.BucketVersioning, m.BucketBlockPublic = types.StringNull(), types.StringNull(), types.BoolNull()
	m.ObjectLifecycle = types.ObjectNull(lifecycleAttrTypes)
	m.AlluxioProperties = types.StringNull()
	return false, diags
}

// readBucket refreshes a cold tier; gone reports a bucket deleted outside.
func (r *storageTierResource) readBucket(ctx context.Context, bucket string, m *storageTierModel) (gone bool, diags diag.Diagnostics) {
	what := fmt.Sprintf("Reading storage tier %s (bucket %s)", bucket, bucket)
	info, err := r.client.FindBucket(ctx, bucket)
	if cloud.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		diags.AddError(what, err.Error())
		return false, diags
	}
	m.ID = types.StringValue(bucket)
	m.Bucket = types.StringValue(bucket)
	m.Name = types.StringValue(bucket)
	m.Backend = types.StringValue(storageplan.BackendOSS)
	m.Tier = types.StringValue(storageplan.TierCold)
	m.Encryption = types.BoolValue(info.Encrypted)
	// ACL, versioning and public access come with the bucket info: drift costs no extra call.
	m.BucketACL = types.StringValue(info.ACL)
	m.BucketVersioning = types.StringValue(info.Versioning)
	m.BucketBlockPublic = types.BoolValue(info.BlockPublicAccess)
	for _, s := range []*types.String{&m.FileSystemID, &m.MountTarget, &m.MountCommand, &m.FstabLine, &m.ZoneID} {
		*s = types.StringNull()
	}
	rule, err := r.client.FindLifecycleRule(ctx, bucket, lifecycleRuleID)
	if err != nil {
		diags.AddError(what, err.Error())
		return false, diags
	}
	m.ObjectLifecycle = lifecycleValue(rule)
	// Tags are read only when the configuration sets them: one call less per refresh in the
	// common case. Tags added outside Terraform to an untagged tier are therefore not reported.
	if !m.Tags.IsNull() {
		tags, err := r.client.BucketTags(ctx, bucket)
		if err != nil {
			diags.AddError(what, err.Error())
			return false, diags
		}
		m.Tags = stringMap(userTags(tags))
	}
	if m.CapacityTiB.IsNull() { // import: OSS has no size to read back
		m.CapacityTiB = types.Int64Value(1)
	}
	return false, diags
}

// storageNetwork is where a file system's mount target goes.
type storageNetwork struct{ VpcID, VSwitchID, ZoneID string }

// resolveStorageNetwork finds the VPC, vSwitch and zone from vswitch_id when given, else from the
// gpucluster_rdma_network (lookupNetwork): the first of its vSwitches by zone is used.
func resolveStorageNetwork(ctx context.Context, c *cloud.Client, networkID, vpcID, vswitchID string) (storageNetwork, error) {
	if vswitchID != "" {
		sw, err := c.FindVSwitch(ctx, vswitchID)
		if err != nil {
			return storageNetwork{}, fmt.Errorf("vswitch_id %s: %w", vswitchID, err)
		}
		if vpcID != "" && sw.VPCID != vpcID {
			return storageNetwork{}, fmt.Errorf("vSwitch %s is in VPC %s, not in vpc_id %s: fix vpc_id or leave it out", vswitchID, sw.VPCID, vpcID)
		}
		return storageNetwork{VpcID: sw.VPCID, VSwitchID: sw.ID, ZoneID: sw.ZoneID}, nil
	}
	if networkID == "" {
		return storageNetwork{}, fmt.Errorf("no network_id and no vswitch_id: a file system needs a vSwitch for its mount target")
	}
	n, err := lookupNetwork(ctx, c, networkID, vpcID)
	if err != nil {
		return storageNetwork{}, err
	}
	sw := n.VSwitches[0]
	return storageNetwork{VpcID: n.VPCID, VSwitchID: sw.ID, ZoneID: sw.ZoneID}, nil
}

// lifecycleOf reads object_lifecycle: nil when null; known false when any part is unknown.
func lifecycleOf(ctx context.Context, v types.Object, diags *diag.Diagnostics) (*storageplan.Lifecycle, bool) {
	if v.IsUnknown() {
		return nil, false
	}
	if v.IsNull() {
		return nil, true
	}
	var m lifecycleModel
	diags.Append(v.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	for _, x := range []types.Int64{m.IA, m.Archive, m.ColdArchive, m.Expire} {
		if x.IsUnknown() {
			return nil, false
		}
	}
	return &storageplan.Lifecycle{
		IAAfterDays: int(m.IA.ValueInt64()), ArchiveAfterDays: int(m.Archive.ValueInt64()),
		ColdArchiveAfterDays: int(m.ColdArchive.ValueInt64()), ExpireAfterDays: int(m.Expire.ValueInt64()),
	}, true
}

// lifecycleRuleOf turns object_lifecycle into the bucket's rule; nil removes it.
func lifecycleRuleOf(ctx context.Context, v types.Object, diags *diag.Diagnostics) *cloud.LifecycleRule {
	l, _ := lifecycleOf(ctx, v, diags)
	if l == nil || l.IsZero() {
		return nil
	}
	rule := &cloud.LifecycleRule{ID: lifecycleRuleID, Transitions: map[string]int{}, ExpireDays: l.ExpireAfterDays}
	for _, t := range l.Transitions() {
		rule.Transitions[t.StorageClass] = t.Days
	}
	return rule
}

// lifecycleValue is the state of object_lifecycle for the rule found on the bucket.
func lifecycleValue(rule *cloud.LifecycleRule) types.Object {
	if rule == nil {
		return types.ObjectNull(lifecycleAttrTypes)
	}
	day := func(n int) types.Int64 {
		if n <= 0 {
			return types.Int64Null()
		}
		return types.Int64Value(int64(n))
	}
	return types.ObjectValueMust(lifecycleAttrTypes, map[string]attr.Value{
		"ia_after_days":           day(rule.Transitions[storageplan.ClassIA]),
		"archive_after_days":      day(rule.Transitions[storageplan.ClassArchive]),
		"cold_archive_after_days": day(rule.Transitions[storageplan.ClassColdArchive]),
		"expire_after_days":       day(rule.ExpireDays),
	})
}

// cacheOf reads cache: nil when null; known false when any part is unknown.
func cacheOf(ctx context.Context, v types.Object, diags *diag.Diagnostics) (*storageplan.Cache, bool) {
	if v.IsUnknown() {
		return nil, false
	}
	if v.IsNull() {
		return nil, true
	}
	var m cacheModel
	diags.Append(v.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	if m.Engine.IsUnknown() || m.SizeGiB.IsUnknown() || m.TargetHitRate.IsUnknown() || m.HotDatasetGiB.IsUnknown() {
		return nil, false
	}
	return &storageplan.Cache{Engine: m.Engine.ValueString(), SizeGiB: m.SizeGiB.ValueInt64(),
		TargetHitRate: m.TargetHitRate.ValueFloat64(), HotDatasetGiB: m.HotDatasetGiB.ValueInt64()}, true
}

func diskHintValue(h *storageplan.DiskHint) types.Object {
	if h == nil {
		return types.ObjectNull(diskHintAttrTypes)
	}
	return types.ObjectValueMust(diskHintAttrTypes, map[string]attr.Value{
		"category": types.StringValue(h.Category), "performance_level": types.StringValue(h.Level),
		"size_gib": types.Int64Value(int64(h.SizeGiB)), "iops": types.Int64Value(int64(h.IOPS)),
		"throughput_mbps": types.Int64Value(int64(h.MBps)),
	})
}

func tierStringMap(ctx context.Context, v types.Map, diags *diag.Diagnostics) map[string]string {
	out, d := mapOf(ctx, v)
	diags.Append(d...)
	return out
}

// upgradeClientToken is the ClientToken of growing one file system to one size: a retried or
// re-run upgrade to the same size is the same request.
func upgradeClientToken(id string, capacityGiB int64) string {
	return cloud.ClientToken(0, "storage-tier-upgrade", id, strconv.FormatInt(capacityGiB, 10))
}

// storageSystemTags are the tags the provider puts on a tier's file system or bucket.
func storageSystemTags(name string) map[string]string {
	return map[string]string{tagManagedBy: managedByVal, tagStorageTier: name}
}

// storageTags is everything a tier's file system or bucket carries: the user's tags and the
// provider's.
func storageTags(name string, user map[string]string) map[string]string {
	return mergeTags(user, storageSystemTags(name))
}

// adoptBucket looks for the tier's bucket before creating it: bucket names are global, so the
// deterministic name is the finder. A bucket this account can read that carries the tier's tags,
// or that is untagged and empty (an apply interrupted between PutBucket and PutBucketTags), is
// adopted: tagged and brought to the tier's settings; it reports true. Anything else under the
// name is refused rather than taken over.
func (r *storageTierResource) adoptBucket(ctx context.Context, name string, user map[string]string, encrypted bool) (bool, error) {
	_, err := r.client.FindBucket(ctx, name)
	if cloud.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for an existing bucket %s: %w", name, err)
	}
	have, err := r.client.BucketTags(ctx, name)
	if err != nil {
		return false, err
	}
	if have[tagManagedBy] != managedByVal || have[tagStorageTier] != name {
		some, err := r.client.ListObjectVersions(ctx, name, 1)
		if err != nil {
			return false, err
		}
		if len(some) > 0 {
			return false, fmt.Errorf("bucket %s already exists in this account, holds objects (for example %q) and does not carry "+
				"the tags %s = %s and %s = %s that mark a bucket made by gpucluster_storage_tier, so it was not taken over: "+
				"import it (terraform import gpucluster_storage_tier.<name> %s) or choose another name",
				name, some[0].Key, tagManagedBy, managedByVal, tagStorageTier, name, name)
		}
	}
	if err := r.client.SetBucketTags(ctx, name, storageTags(name, user)); err != nil {
		return false, err
	}
	if err := r.client.ApplyBucketSettings(ctx, name, encrypted); err != nil {
		return false, err
	}
	return true, nil
}

// createOrAdoptFileSystem returns the tier's file system: one found by the tier's tags that
// matches the configuration (left by an interrupted apply), else one created with a ClientToken
// derived from the configuration, so that a create whose answer was lost is answered with the
// same file system when run again. haveTags are the tags it carries now.
func (r *storageTierResource) createOrAdoptFileSystem(ctx context.Context, tier string, b storageplan.Backend, in cloud.FileSystemInput) (id string, haveTags map[string]string, adopted bool, err error) {
	found, err := r.client.FindFileSystemsByTags(ctx, storageSystemTags(in.Description))
	if err != nil {
		return "", nil, false, err
	}
	var match []string
	for i := range found {
		fs := &found[i]
		if fs.Type != b.FileSystemType || fs.StorageType != b.StorageType ||
			(fs.ZoneID != "" && fs.ZoneID != in.ZoneID) || (fs.VPCID != "" && fs.VPCID != in.VpcID) ||
			fs.Encrypted != in.Encrypted || (b.SendsCapacity && fs.CapacityGiB > in.CapacityGiB) {
			continue
		}
		match = append(match, fs.ID)
		id, haveTags = fs.ID, fs.Tags
	}
	switch {
	case len(match) > 1:
		return "", nil, false, fmt.Errorf("file systems %s all carry %s = %s and match this configuration, so which one "+
			"belongs to it is ambiguous: delete the extra ones, or import the right one", strings.Join(match, ", "), tagStorageTier, in.Description)
	case len(match) == 1:
		return id, haveTags, true, nil
	}
	parts := []string{"storage-tier", in.Description, tier, b.Name, in.FileSystemType, in.StorageType, in.ProtocolType,
		in.ZoneID, in.VpcID, in.VSwitchID, strconv.FormatInt(in.CapacityGiB, 10), strconv.FormatBool(in.Encrypted)}
	id, err = cloud.CreateOrAdopt("file system "+in.Description, parts,
		func(token string) (string, error) {
			in.ClientToken = token
			return r.client.CreateFileSystem(ctx, in)
		},
		func(id string) error {
			fs, err := r.client.FindFileSystem(ctx, id)
			if err == nil {
				haveTags = fs.Tags
			}
			return err
		})
	return id, haveTags, false, err
}

// mountTargetIn returns the file system's mount target in the network's vSwitch, creating it
// when there is none: CreateMountTarget takes no ClientToken, so one left by an interrupted
// apply is found by listing, and the call is made only when the list has none. It does not
// wait.
func (r *storageTierResource) mountTargetIn(ctx context.Context, fsID string, net storageNetwork) (string, error) {
	targets, err := r.client.FindMountTargets(ctx, fsID)
	if err != nil {
		return "", err
	}
	domain := ""
	for _, t := range targets {
		if t.VSwitchID == net.VSwitchID && t.VPCID == net.VpcID {
			domain = t.Domain
			break
		}
	}
	if domain == "" {
		return r.client.CreateMountTarget(ctx, fsID, net.VpcID, net.VSwitchID)
	}
	return domain, nil
}
