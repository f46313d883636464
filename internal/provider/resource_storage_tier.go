package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
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

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storage"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

var (
	_ resource.ResourceWithConfigure      = (*storageTierResource)(nil)
	_ resource.ResourceWithImportState    = (*storageTierResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*storageTierResource)(nil)
	_ resource.ResourceWithValidateConfig = (*storageTierResource)(nil)
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
	attrs := joinAttributes(storageTierPlacementAttributes(), storageTierTargetAttributes(), storageTierSettingsAttributes(), storageTierSizingAttributes(), storageTierAccessAttributes())
	attrs["timeouts"] = timeoutsAttribute(ctx)
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
		Attributes: attrs,
	}
}

// storageTierPlacementAttributes: the tier's id, name, kind and where it sits in the network.
func storageTierPlacementAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
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
		"zone_id": computedStringAttribute("Zone of the file system: the vSwitch's zone."),
	}
}

// storageTierTargetAttributes: what the tier must deliver and which backend delivers it.
func storageTierTargetAttributes() map[string]schema.Attribute {
	backendDoc := make([]string, 0, len(storageplan.BackendNames()))
	for _, n := range storageplan.BackendNames() {
		b, _ := storageplan.LookupBackend(n)
		backendDoc = append(backendDoc, fmt.Sprintf("`%s` (%s)", n, b.Title))
	}
	candidatesDoc := make([]string, 0, 3)
	for _, t := range storageplan.Tiers() {
		candidatesDoc = append(candidatesDoc, fmt.Sprintf("%s: `%s`", t, strings.Join(storageplan.Candidates(t), "`, `")))
	}
	return map[string]schema.Attribute{
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
	}
}

// storageTierSettingsAttributes: encryption, the cold tier's lifecycle and cache, tags, and destroy behaviour.
func storageTierSettingsAttributes() map[string]schema.Attribute {
	intAttr := func(doc string) schema.Int64Attribute {
		return schema.Int64Attribute{Optional: true, MarkdownDescription: doc, Validators: []validator.Int64{int64validator.AtLeast(1)}}
	}
	return map[string]schema.Attribute{
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
				"180 days from the transition); anything else is a plan-time error. Kept as one rule `" + storage.LifecycleRuleID +
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
	}
}

// storageTierSizingAttributes: what the plan's sizing expects of the tier.
func storageTierSizingAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
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
		"estimated_hourly_price": schema.Float64Attribute{
			Computed: true,
			MarkdownDescription: "List price of the tier per hour, CNY (the unit of `gpucluster_node_pool.estimated_hourly_price`): " +
				"`provisioned_capacity_tib` x 1,024 GiB x the vendor's pay-as-you-go price per GiB-month (China (Hangzhou)) / 720 " +
				"hours (the vendor's 30 days x 24 hours). Known at plan once the capacity is. Priced backends: `" +
				strings.Join(storageplan.PricedBackends(), "`, `") + "`; OSS is priced as Standard storage of the whole " +
				"`capacity_tib` (an upper bound: lifecycle moves lower it, and OSS bills what is stored). For every other backend " +
				"the vendor's price could not be sourced, and the attribute is null rather than a guess.",
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
	}
}

// storageTierAccessAttributes: the created file system or bucket and how nodes mount or reach it.
func storageTierAccessAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"file_system_id": computedStringAttribute("NAS or CPFS file system id (hot, warm)."),
		"bucket":         computedStringAttribute("OSS bucket name (cold)."),
		"mount_target":   computedStringAttribute("Mount target domain of the file system."),
		"mount_command":  computedStringAttribute("Shell command that mounts the file system at `/mnt/<name>` with NFS options for large sequential reads (NFSv3, 1 MiB rsize/wsize, hard)."),
		"fstab_line":     computedStringAttribute("The same mount as an `/etc/fstab` line."),
		"alluxio_properties": computedStringAttribute("Cold tier with `cache`: an `alluxio-site.properties` mounting the bucket as Alluxio's root " +
			"with the worker cache sized to `cache.size_gib`. Carries no credentials."),
		"bucket_acl": computedStringAttribute("Cold tier: the bucket's ACL, always `" + storage.BucketACL + "`. Changed outside " +
			"Terraform, the next plan shows it and the apply restores it."),
		"bucket_versioning": computedStringAttribute("Cold tier: the bucket's versioning status, always `" + storage.BucketVersioning +
			"`. Changed outside Terraform (suspended), the next plan shows it and the apply restores it."),
		"bucket_block_public_access": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "Cold tier: whether the bucket blocks public access, always `true`. Changed outside " +
				"Terraform, the next plan shows it and the apply restores it.",
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
	ctx, cancel, ok := startOperation(ctx, r.client, "Creating storage tier", plan.Timeouts.Create, storageCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	backend, _ := storageplan.LookupBackend(plan.Backend.ValueString())
	tags := tierStringMap(ctx, plan.Tags, &resp.Diagnostics)
	if !r.store(backend).create(ctx, &plan, tags, &resp.State, &resp.Diagnostics) {
		return
	}
	plan.setPrice()
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *storageTierResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state storageTierModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !clientConfigured(r.client, "Reading storage tier", &resp.Diagnostics) {
		return
	}
	id := state.ID.ValueString()
	var store tierStore
	if b, ok := storageplan.LookupBackend(state.Backend.ValueString()); ok {
		store = r.store(b)
	} else {
		// Import: the id alone says nothing; a file system id is looked for first.
		_, err := r.client.FindFileSystem(ctx, id)
		switch {
		case cloud.IsNotFound(err):
			store = bucketStore{client: r.client}
		case err != nil:
			resp.Diagnostics.AddError(fmt.Sprintf("Reading storage tier %s", id), err.Error())
			return
		default:
			store = fileSystemStore{client: r.client}
		}
	}
	gone, diags := store.read(ctx, id, &state)
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
	state.setPrice()
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *storageTierResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior storageTierModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := startOperation(ctx, r.client, "Updating storage tier", plan.Timeouts.Update, storageUpdateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	backend, _ := storageplan.LookupBackend(plan.Backend.ValueString())
	oldTags := tierStringMap(ctx, prior.Tags, &resp.Diagnostics)
	newTags := tierStringMap(ctx, plan.Tags, &resp.Diagnostics)
	tagsChanged := !plan.Tags.Equal(prior.Tags) && !(len(oldTags) == 0 && len(newTags) == 0)
	r.store(backend).update(ctx, &plan, &prior, oldTags, newTags, tagsChanged, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.setPrice()
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *storageTierResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state storageTierModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := startOperation(ctx, r.client, "Deleting storage tier", state.Timeouts.Delete, storageDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	backend, _ := storageplan.LookupBackend(state.Backend.ValueString())
	r.store(backend).delete(ctx, &state, &resp.Diagnostics)
}

func (r *storageTierResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("encryption"), true)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
}

// computedStringAttribute is a computed string attribute described by doc.
func computedStringAttribute(doc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, MarkdownDescription: doc}
}
