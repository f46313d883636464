package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/preflight"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// checkPoolPreflight is the pool's own plan check over what it adds: its new nodes against the
// vCPU quotas, the stock of its zones (the spot stock for spot nodes) and its vSwitches' free
// addresses, each shortfall an error on size (autoscaling.max_size), network_id or zone_ids.
// Only growth counts (preflight.Growth): a pool that keeps or lowers its size makes no call and
// is never refused, however full the account is of its own nodes. Two calls
// (DescribeAccountAttributes, DescribeAvailableResource), one more for a pool planned as new
// (DescribeInstances: its own nodes, see below), one more for spot unless checkSpotOffered read the
// spot stock already (spotStocks), and two more for an
// autoscaling pool (DescribeLimitation, DescribeScalingGroups: its group against the scaling
// group quota and the largest max_size); the network's vSwitches were read with it already.
func (r *nodePoolResource) checkPoolPreflight(ctx context.Context, spec nodepool.Spec, state *nodePoolModel, spotStocks []cloud.InstanceTypeStock, diags *diag.Diagnostics) {
	if r.client == nil || len(spec.Types) == 0 || len(spec.Zones) == 0 {
		return
	}
	g := poolGrowth(ctx, spec, state)
	if g.NewNodes() == 0 {
		return
	}
	t, err := catalog.ParseInstanceType(spec.Types[0])
	if err != nil {
		return // a type the catalog does not know was refused by the spec already
	}
	spot := asksSpot(spec)
	a, err := readQuotasAndStock(ctx, r.client, r.spotStockReader(spot, spotStocks))
	if err != nil {
		diags.AddWarning("Preflight not checked", "Reading the account's quotas and stock for the pool's new nodes: "+err.Error())
		return
	}
	if state == nil && spec.Network.ID != "" {
		// A pool planned as new may have nodes already: a tainted pool being replaced (Terraform
		// plans it as a create; its nodes go first and give their quota and stock back) or the
		// nodes of an interrupted apply, which the create adopts. They are counted as the pool's
		// own (one DescribeInstances), and the stock is not checked: what those nodes give back
		// cannot be read from DescribeAvailableResource's status.
		own, err := r.client.CountInstancesByTags(ctx, map[string]string{tagging.PoolName: spec.Name, tagging.PoolNetwork: spec.Network.ID})
		if err != nil {
			diags.AddWarning("Preflight not checked", "Counting the pool's own nodes: "+err.Error())
			return
		}
		if own > 0 {
			g.Current = own
			a.Stock, a.SpotStock = nil, nil
		}
	}
	p := preflight.Pool{InstanceType: t.Name, VCPUs: t.VCPU, GPUs: t.GPUs, Spot: spot, Zones: spec.Zones,
		VSwitches: map[string]preflight.VSwitch{}, Attrs: preflight.Attrs{VSwitches: "network_id"}}
	if spec.Fallback {
		// instance_type_fallback: where the planned type is out, the next candidates launch (the
		// ones the create tries, or the scaling configuration lists), so a zone with stock of one
		// of them places nodes too; the same stock answer holds them, no call is added.
		p.Fallbacks = launchFallbacks(spec)
	}
	if spec.Autoscale != nil {
		p.Attrs.Size = "autoscaling.max_size"
		p.SpotFallback = spec.Autoscale.Mix.CompensateWithOnDemand
		g.Group = &preflight.ScalingGroup{Path: "autoscaling", InstanceType: t.Name, Limit: spec.Autoscale.Max}
		g.NewGroup = state == nil || state.ScalingGroupID.ValueString() == ""
		if err := readScalingQuota(ctx, r.client, &a); err != nil {
			diags.AddWarning("Preflight not checked", "Reading the account's Auto Scaling quota for the pool's scaling group: "+err.Error())
			return
		}
	}
	for _, z := range spec.Zones {
		p.VSwitches[z] = preflight.VSwitch{} // the network's vSwitch below; without one, addresses unknown
	}
	for zone, id := range spec.Network.VSwitchIDs {
		p.VSwitches[zone] = preflight.VSwitch{ID: id, CIDR: spec.Network.VSwitchCIDRs[id]}
		if free, ok := spec.Network.FreeAddresses[id]; ok {
			a.FreeAddresses[id] = free
		}
	}
	rep := preflight.CheckPool(p, g, a, r.client.RateLimit())
	for _, e := range rep.Shortfalls {
		addPlanError(diags, e, "Preflight: the pool's new nodes do not fit")
	}
}

// launchFallbacks are the types a pool with instance_type_fallback launches after its planned
// one: every candidate for a fixed pool's create (poolplan.Tries), the ones its scaling
// configuration lists for an autoscaling pool (nodepool.LaunchTypes).
func launchFallbacks(spec nodepool.Spec) []string {
	types := spec.Types
	if spec.Autoscale != nil {
		types = nodepool.LaunchTypes(spec)
	}
	return slices.Clone(types[1:])
}

// spotStockReader is how the pool's preflight reads the spot stock: not at all without spot, from
// the answer checkSpotOffered read for the same plan when it has one (the same
// DescribeAvailableResource call), else with a call of its own.
func (r *nodePoolResource) spotStockReader(spot bool, read []cloud.InstanceTypeStock) func(context.Context) ([]cloud.InstanceTypeStock, error) {
	switch {
	case !spot:
		return nil
	case read != nil:
		return func(context.Context) ([]cloud.InstanceTypeStock, error) { return read, nil }
	}
	return r.client.SpotInstanceTypeStocks
}

// poolGrowth is what the plan adds over the state: a fixed pool's size, an autoscaling pool's
// max_size over the nodes its group had when last read.
func poolGrowth(ctx context.Context, spec nodepool.Spec, state *nodePoolModel) preflight.Growth {
	g := preflight.Growth{Planned: spec.Size}
	if spec.Autoscale != nil {
		g.Planned = spec.Autoscale.Max
	}
	if state == nil {
		return g
	}
	g.Previous, g.Current = int(state.Size.ValueInt64()), int(state.Size.ValueInt64())
	if spec.Autoscale != nil {
		var a autoscalingModel
		if !state.Autoscaling.IsNull() && !state.Autoscaling.IsUnknown() && !state.Autoscaling.As(ctx, &a, basetypes.ObjectAsOptions{}).HasError() {
			g.Previous = int(a.MaxSize.ValueInt64())
		}
		g.Current = len(state.Nodes.Elements())
	}
	return g
}

// asksSpot is whether the pool launches spot nodes: a fixed pool with a spot strategy, an
// autoscaling one whose mix puts any node above the base on spot.
func asksSpot(spec nodepool.Spec) bool {
	return spec.Spot != "" && spec.Spot != "NoSpot" && (spec.Autoscale == nil || launchesSpot(&spec))
}
