package provider

// Plan-time checks of gpucluster_storage_tier: ValidateConfig (no API call) and ModifyPlan, which
// sizes the tier (storageplan) and marks what needs a replacement.

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

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
	checkUserTags(cfg.Tags, maxUserTags, &resp.Diagnostics)
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
	sized, err := sizeTier(plan, cfg, prior)
	if err != nil {
		resp.Diagnostics.AddAttributeError(planErrorPath(err, path.Root("capacity_tib")), fmt.Sprintf("Sizing storage tier %s: target cannot be met", plan.Name.ValueString()), err.Error())
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
	plan.setPrice()

	store := r.store(sized.Backend)
	replace := tierReplacements(store, sized, &plan, cfg, prior)
	resp.RequiresReplace = append(resp.RequiresReplace, replace...)
	fresh := prior == nil || len(replace) > 0

	plan.BucketACL, plan.BucketVersioning, plan.BucketBlockPublic = types.StringNull(), types.StringNull(), types.BoolNull()
	store.planComputed(&plan, &cfg, prior, fresh, cache, cacheKnown)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

// sizeTier sizes the tier for its targets. An existing tier keeps its backend while that backend
// still meets them.
func sizeTier(plan, cfg storageTierModel, prior *storageTierModel) (storageplan.Plan, error) {
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
	return sized, err
}

// tierReplacements are the attributes whose change needs a new file system or bucket.
func tierReplacements(store tierStore, sized storageplan.Plan, plan *storageTierModel, cfg storageTierModel, prior *storageTierModel) []path.Path {
	var replace []path.Path
	if prior != nil {
		if prior.Backend.ValueString() != "" && prior.Backend.ValueString() != sized.Backend.Name {
			replace = append(replace, path.Root("backend"))
		}
		if sized.Backend.SendsCapacity && sized.CapacityTiB < prior.ProvisionedCapacityTiB.ValueInt64() {
			replace = append(replace, path.Root("capacity_tib"))
		}
		replace = append(replace, store.replacedBy(plan, prior)...)
		for _, p := range []struct {
			name      string
			cfg, prev types.String
		}{{"vpc_id", cfg.VpcID, prior.VpcID}, {"vswitch_id", cfg.VSwitchID, prior.VSwitchID}} {
			if !p.cfg.IsNull() && !p.cfg.Equal(p.prev) {
				replace = append(replace, path.Root(p.name))
			}
		}
	}
	return replace
}
