package provider

// The data of gpucluster_storage_tier: its tfsdk model and the conversions between its nested
// attributes and storageplan / cloud values.

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

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
	EstimatedHourlyPrice   types.Float64  `tfsdk:"estimated_hourly_price"`
}

// setPrice fills estimated_hourly_price from the backend and the provisioned capacity: null
// when the vendor's price of the backend is not known, unknown until both are.
func (m *storageTierModel) setPrice() {
	if m.Backend.IsUnknown() || m.ProvisionedCapacityTiB.IsUnknown() {
		m.EstimatedHourlyPrice = types.Float64Unknown()
		return
	}
	price, known := storageplan.HourlyPrice(m.Backend.ValueString(), m.ProvisionedCapacityTiB.ValueInt64())
	if !known || m.ProvisionedCapacityTiB.IsNull() { // an imported bucket has no capacity until planned
		m.EstimatedHourlyPrice = types.Float64Null()
		return
	}
	m.EstimatedHourlyPrice = types.Float64Value(price)
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
