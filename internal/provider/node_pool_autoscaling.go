package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// checkAutoscalingConfig: what an autoscaling pool cannot be, said at validate time.
func checkAutoscalingConfig(cfg *nodePoolModel, n poolNested, diags *diag.Diagnostics) {
	a := n.Autoscaling
	if a == nil {
		return
	}
	at := path.Root("autoscaling")
	if !a.MinSize.IsUnknown() && !a.MaxSize.IsUnknown() && a.MinSize.ValueInt64() > a.MaxSize.ValueInt64() {
		diags.AddAttributeError(at.AtName("min_size"), "autoscaling.min_size above max_size",
			fmt.Sprintf("autoscaling.min_size = %d is more than max_size = %d: the group could never hold its minimum. Lower min_size or raise max_size.",
				a.MinSize.ValueInt64(), a.MaxSize.ValueInt64()))
	}
	if n.Spot == nil {
		for name, v := range map[string]bool{"on_demand_base": !a.OnDemandBase.IsNull(), "on_demand_percentage": !a.OnDemandPercentage.IsNull(),
			"fallback_to_on_demand": !a.FallbackToOnDemand.IsNull()} {
			if v {
				diags.AddAttributeError(at.AtName(name), "autoscaling."+name+" needs spot",
					fmt.Sprintf("autoscaling.%s splits the pool between spot and pay-as-you-go nodes, and this pool has no spot block: every node is pay-as-you-go. Add spot = { strategy = \"SpotAsPriceGo\" } or remove %s.", name, name))
			}
		}
	}
	if k := n.Kubernetes; k != nil && k.Role.ValueString() == bootstrap.RoleControlPlane {
		diags.AddAttributeError(at, "A control plane cannot autoscale",
			"kubernetes.role = \"control_plane\" runs etcd, whose member count must not follow load. Use size = 1, 3 or 5 and remove autoscaling.")
	}
	if !cfg.MinSize.IsNull() {
		diags.AddAttributeError(path.Root("min_size"), "min_size is for fixed-size pools",
			"min_size is the all-or-nothing floor of a fixed-size pool's create. An autoscaling pool's floor is autoscaling.min_size: remove min_size.")
	}
	if !cfg.AutoReleaseAfter.IsNull() {
		diags.AddAttributeError(path.Root("auto_release_after"), "auto_release_after does not apply to autoscaling pools",
			"A scaling group's nodes are released by the Cluster Autoscaler when idle (scale-down), not at a fixed time. Remove auto_release_after.")
	}
}

// checkBudget refuses a plan whose pool at max_size would cost more per hour than
// autoscaling.max_hourly_price, priced pay-as-you-go in the first zone (the worst case: spot
// may fall back to it). It needs the network (the zone); without it the apply checks.
func (r *nodePoolResource) checkBudget(ctx context.Context, spec nodepool.Spec, diags *diag.Diagnostics) {
	a := spec.Autoscale
	if a == nil || a.Budget == 0 || r.client == nil || len(spec.Zones) == 0 {
		return
	}
	price, _, err := r.client.HourlyPrice(ctx, spec.Types[0], spec.Zones[0], "", a.Max)
	if err != nil {
		diags.AddAttributeWarning(path.Root("autoscaling").AtName("max_hourly_price"), "Budget not checked", "Pricing the pool at max_size: "+err.Error())
		return
	}
	if price > a.Budget {
		diags.AddAttributeError(path.Root("autoscaling").AtName("max_hourly_price"), "Pool over budget at max_size",
			fmt.Sprintf("autoscaling.max_size = %d nodes of %s cost %.2f per hour pay-as-you-go, more than autoscaling.max_hourly_price = %.2f. "+
				"Lower max_size to %d or less, or raise max_hourly_price.", a.Max, spec.Types[0], price, a.Budget, int(a.Budget/(price/float64(a.Max)))))
	}
}

// checkSpotOffered refuses a plan that asks for spot nodes of instance types the region sells
// pay-as-you-go only in the pool's zones: every spot launch would fail. One DescribeAvailableResource
// call answers for the region. It needs the zones and the type; while they are unknown the
// apply's launches say it.
func (r *nodePoolResource) checkSpotOffered(ctx context.Context, spec nodepool.Spec, diags *diag.Diagnostics) (spotStocks []cloud.InstanceTypeStock) {
	if !asksSpot(spec) || r.client == nil || len(spec.Zones) == 0 || len(spec.Types) == 0 {
		return nil
	}
	spotStocks, err := r.client.SpotInstanceTypeStocks(ctx)
	if err != nil {
		diags.AddAttributeWarning(path.Root("spot"), "Spot offer not checked", "Asking which instance types are sold as spot: "+err.Error())
		return nil
	}
	offers := cloud.SpotOffersOf(spotStocks)
	offered := map[string]bool{} // "type\x00zone", the type without its "ecs." prefix
	for typ, zones := range offers {
		for _, z := range zones {
			offered[strings.TrimPrefix(typ, "ecs.")+"\x00"+z] = true
		}
	}
	types := nodepool.LaunchTypes(spec)
	for _, typ := range types {
		for _, z := range spec.Zones {
			if offered[strings.TrimPrefix(typ, "ecs.")+"\x00"+z] {
				return spotStocks
			}
		}
	}
	fix := "Pin another instance_type (or gpu_model) whose spot is sold there, or remove spot"
	if spec.Autoscale != nil {
		fix += ", or set autoscaling.on_demand_percentage = 100 (every node above on_demand_base pay-as-you-go)"
	}
	diags.AddAttributeError(path.Root("spot"), fmt.Sprintf("No spot of %s in %s", strings.Join(types, ", "), strings.Join(spec.Zones, ", ")),
		fmt.Sprintf("spot = { strategy = %q } asks for spot nodes, and the region sells %s pay-as-you-go only in zone(s) %s "+
			"(DescribeAvailableResource with SpotStrategy lists no spot offer there): every spot launch would fail. %s.",
			spec.Spot, strings.Join(types, ", "), strings.Join(spec.Zones, ", "), fix))
	return spotStocks
}

// checkNodeTagCount refuses, at plan, a pool whose nodes would carry more tags than ECS allows
// on one instance: the provider's own, the built-in labels of an autoscaling pool and tags.
func checkNodeTagCount(spec nodepool.Spec, diags *diag.Diagnostics) {
	own, labels := nodepool.TagCount(spec)
	why := ""
	if spec.Autoscale != nil {
		why = fmt.Sprintf(" (%d of them the pool's built-in node labels, which its scaling configuration carries so the Cluster Autoscaler can scale the group from zero)", labels)
	} else {
		why = " (one of them kept free for " + tagging.ReplaceRequested + ", which the GPU health agent sets on a node whose GPU must be replaced)"
	}
	if total := own + len(spec.UserTags); total > cloud.MaxTagsPerResource {
		diags.AddAttributeError(path.Root("tags"), "Too many tags for a node",
			fmt.Sprintf("Every node of this pool would carry %d tags: %d of the provider's own%s and the %d of tags. ECS allows %d per instance: drop %d of tags.",
				total, own, why, len(spec.UserTags), cloud.MaxTagsPerResource, total-cloud.MaxTagsPerResource))
	}
}

// applyAutoscaling creates or updates the pool's scaling group (nodepool.ApplyAutoscaling) and
// records what it got to: the pool and group ids once the group exists, the nodes once read.
func (r *nodePoolResource) applyAutoscaling(ctx context.Context, spec nodepool.Spec, plan *nodePoolModel, diags *diag.Diagnostics) {
	summary := fmt.Sprintf("node pool %q (autoscaling)", spec.Name)
	if spec.Autoscale.Budget > 0 {
		r.checkBudget(ctx, spec, diags)
		if diags.HasError() {
			return
		}
	}
	res, err := nodepool.ApplyAutoscaling(ctx, r.client, spec)
	if errors.Is(err, nodepool.ErrNoZoneVSwitch) {
		diags.AddAttributeError(path.Root("zone_ids"), summary, err.Error())
		return
	}
	if res.GroupID != "" {
		spec.PoolID = res.PoolID
		plan.ID, plan.ScalingGroupID = types.StringValue(res.PoolID), types.StringValue(res.GroupID)
	}
	addJoinedErrors(summary, err, diags)
	for _, w := range res.Warnings {
		diags.AddWarning(summary, w)
	}
	if res.NodesRead {
		r.recordAutoscaled(ctx, spec, plan, res.Nodes, diags)
	}
}

// addJoinedErrors adds one error diagnostic per error that err joins (errors.Join), or one for
// err itself.
func addJoinedErrors(summary string, err error, diags *diag.Diagnostics) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			diags.AddError(summary, e.Error())
		}
		return
	}
	diags.AddError(summary, err.Error())
}

// autoscaledPrice is what the nodes there are now cost per hour: a mixed group's spot and
// pay-as-you-go nodes each at their own price.
func (r *nodePoolResource) autoscaledPrice(ctx context.Context, spec nodepool.Spec, nodes []cloud.Instance, diags *diag.Diagnostics) float64 {
	spot := 0
	for _, n := range nodes {
		if n.SpotStrategy != "" && n.SpotStrategy != "NoSpot" {
			spot++
		}
	}
	total := 0.0
	for _, part := range []struct {
		strategy string
		n        int
	}{{"", len(nodes) - spot}, {spec.SpotForPrice(), spot}} {
		if part.n == 0 {
			continue
		}
		p, _, err := r.client.HourlyPrice(ctx, spec.Types[0], nodes[0].ZoneID, part.strategy, part.n)
		if err != nil {
			diags.AddWarning(fmt.Sprintf("node pool (%s): no price estimate", spec.PoolID), err.Error())
		}
		total += p
	}
	return total
}

// recordAutoscaled records the nodes, and the price of the nodes there are now.
func (r *nodePoolResource) recordAutoscaled(ctx context.Context, spec nodepool.Spec, plan *nodePoolModel, nodes []cloud.Instance, diags *diag.Diagnostics) {
	diags.Append(plan.setNodes(ctx, nodes)...)
	if plan.ZoneIDs.IsUnknown() {
		plan.ZoneIDs = stringList(spec.Zones)
	}
	plan.EstimatedHourlyPrice = types.Float64Value(r.autoscaledPrice(ctx, spec, nodes, diags))
}

// readAutoscaled refreshes an autoscaling pool: its nodes are whatever the autoscaler left, and
// bounds changed outside Terraform are read back so the next plan puts them right. found is
// false when the group is gone.
func (r *nodePoolResource) readAutoscaled(ctx context.Context, state *nodePoolModel, diags *diag.Diagnostics) (found bool) {
	g, err := r.client.FindScalingGroup(ctx, state.ScalingGroupID.ValueString())
	if err != nil {
		if cloud.IsNotFound(err) {
			return false
		}
		diags.AddError(fmt.Sprintf("reading node pool (%s)", state.ID.ValueString()), err.Error())
		return true
	}
	if !state.Autoscaling.IsNull() && !state.Autoscaling.IsUnknown() {
		var a autoscalingModel
		diags.Append(state.Autoscaling.As(ctx, &a, basetypes.ObjectAsOptions{})...)
		a.MinSize, a.MaxSize = types.Int64Value(int64(g.MinSize)), types.Int64Value(int64(g.MaxSize))
		obj, d := types.ObjectValueFrom(ctx, autoscalingAttrTypes, a)
		diags.Append(d...)
		state.Autoscaling = obj
	}
	nodes, err := r.client.ListInstancesByTags(ctx, map[string]string{tagPool: state.ID.ValueString()})
	if err != nil {
		diags.AddError(fmt.Sprintf("reading node pool (%s)", state.ID.ValueString()), err.Error())
		return true
	}
	diags.Append(state.setNodes(ctx, nodes)...)
	return true
}

// importAutoscaled imports an autoscaling pool: the scaling group tagged with the pool id (found
// false when there is none, and the pool is imported as a fixed-size one). Its bounds and id come
// from the group, the rest as for a fixed pool from the nodes' tags.
func (r *nodePoolResource) importAutoscaled(ctx context.Context, id string, nodes []cloud.Instance, diags *diag.Diagnostics) (*nodePoolModel, bool) {
	groups, err := r.client.FindScalingGroupsByTags(ctx, map[string]string{tagPool: id})
	if err != nil {
		diags.AddError(fmt.Sprintf("importing node pool (%s)", id), err.Error())
		return nil, false
	}
	if len(groups) == 0 {
		return nil, false
	}
	g := groups[0]
	src := nodes
	if len(src) == 0 {
		// A group scaled to zero: it carries the pool's own tags as its nodes do.
		src = []cloud.Instance{{Tags: g.Tags}}
	}
	state, d := importedPool(ctx, id, src)
	diags.Append(d...)
	if diags.HasError() {
		return nil, true
	}
	diags.Append(state.setNodes(ctx, nodes)...)
	if len(nodes) == 0 {
		state.ZoneIDs, state.InstanceType = types.ListNull(types.StringType), types.StringNull()
	}
	a := autoscalingModel{MinSize: types.Int64Value(int64(g.MinSize)), MaxSize: types.Int64Value(int64(g.MaxSize)),
		OnDemandBase: types.Int64Null(), OnDemandPercentage: types.Int64Null(), FallbackToOnDemand: types.BoolNull(), MaxHourlyPrice: types.Float64Null()}
	obj, d := types.ObjectValueFrom(ctx, autoscalingAttrTypes, a)
	diags.Append(d...)
	state.Autoscaling, state.ScalingGroupID = obj, types.StringValue(g.ID)
	state.Size, state.MinSize = types.Int64Null(), types.Int64Value(int64(g.MinSize))
	return state, true
}
