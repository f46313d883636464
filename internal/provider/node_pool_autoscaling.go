package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
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
func (r *nodePoolResource) checkBudget(ctx context.Context, spec poolSpec, diags *diag.Diagnostics) {
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
func (r *nodePoolResource) checkSpotOffered(ctx context.Context, spec poolSpec, diags *diag.Diagnostics) {
	asksSpot := spec.Spot != "" && spec.Spot != "NoSpot" && (spec.Autoscale == nil || launchesSpot(&spec))
	if !asksSpot || r.client == nil || len(spec.Zones) == 0 || len(spec.Types) == 0 {
		return
	}
	offers, err := r.client.SpotOffers(ctx)
	if err != nil {
		diags.AddAttributeWarning(path.Root("spot"), "Spot offer not checked", "Asking which instance types are sold as spot: "+err.Error())
		return
	}
	offered := map[string]bool{} // "type\x00zone", the type without its "ecs." prefix
	for typ, zones := range offers {
		for _, z := range zones {
			offered[strings.TrimPrefix(typ, "ecs.")+"\x00"+z] = true
		}
	}
	types := launchTypes(spec)
	for _, typ := range types {
		for _, z := range spec.Zones {
			if offered[strings.TrimPrefix(typ, "ecs.")+"\x00"+z] {
				return
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
}

// groupTags are the scaling group's tags: the pool's name and network find a group an
// interrupted create left behind.
func groupTags(spec poolSpec) map[string]string {
	return mergeTags(spec.UserTags, map[string]string{tagPool: spec.PoolID, tagPoolName: spec.Name, tagPoolNetwork: spec.Network.ID,
		tagScenario: spec.Scenario, tagManagedBy: managedByVal})
}

// nodeTags are the tags every node of a pool carries, fixed or autoscaling.
func nodeTags(spec poolSpec) map[string]string {
	return mergeTags(groupTags(spec), map[string]string{tagSpec: spec.SpecHash})
}

// configurationTags are the tags of an autoscaling pool's scaling configuration, which the group
// puts on every node it launches: the node tags and the pool's built-in node labels.
//
// The labels are there for scale from zero. For a group without nodes the Cluster Autoscaler's
// alicloud provider builds a template node from the group's active configuration and takes the
// configuration's tags as the template's labels (cluster-autoscaler/cloudprovider/alicloud,
// alicloud_manager.go, buildGenericLabels). With the built-in labels there, a pending pod that
// selects gpucluster.io/pool or nvidia.com/gpu.product, as the rendered training and MPI jobs do,
// can start a group at zero. Labels from kubernetes.labels are left out: their keys could clash
// with the user's tags, and tags are capped at 20 per resource.
func configurationTags(spec poolSpec) map[string]string {
	return mergeTags(nodeTags(spec), templateLabelTags(spec))
}

// templateLabelTags are the pool's built-in node labels (templateLabelKeys) with their values.
func templateLabelTags(spec poolSpec) map[string]string {
	labels := map[string]string{}
	for _, k := range templateLabelKeys {
		if v, ok := spec.Labels[k]; ok {
			labels[k] = v
		}
	}
	return labels
}

// checkNodeTagCount refuses, at plan, a pool whose nodes would carry more tags than ECS allows
// on one instance: the provider's own, the built-in labels of an autoscaling pool and tags.
func checkNodeTagCount(spec poolSpec, diags *diag.Diagnostics) {
	own, why := len(nodeTags(spec))-len(spec.UserTags), ""
	if spec.Autoscale != nil {
		labels := len(templateLabelTags(spec))
		own += labels
		why = fmt.Sprintf(" (%d of them the pool's built-in node labels, which its scaling configuration carries so the Cluster Autoscaler can scale the group from zero)", labels)
	}
	if total := own + len(spec.UserTags); total > cloud.MaxTagsPerResource {
		diags.AddAttributeError(path.Root("tags"), "Too many tags for a node",
			fmt.Sprintf("Every node of this pool would carry %d tags: %d of the provider's own%s and the %d of tags. ECS allows %d per instance: drop %d of tags.",
				total, own, why, len(spec.UserTags), cloud.MaxTagsPerResource, total-cloud.MaxTagsPerResource))
	}
}

// groupVSwitches are the vSwitches of the pool's zones, in zone_ids order (the group's
// priority).
func groupVSwitches(spec poolSpec) []string {
	var out []string
	for _, z := range spec.Zones {
		if v := spec.Network.VSwitchIDs[z]; v != "" && len(out) < cloud.MaxScalingVSwitches {
			out = append(out, v)
		}
	}
	return out
}

// launchTypes is the configuration's instance-type priority list: the planned type, then with
// instance_type_fallback the catalog's next candidates.
func launchTypes(spec poolSpec) []string {
	if !spec.Fallback {
		return spec.Types[:1]
	}
	return spec.Types[:min(len(spec.Types), cloud.MaxScalingInstanceTypes)]
}

// configurationName names a scaling configuration after the launch settings it holds, so an
// apply finds the one it made before.
func configurationName(spec poolSpec) string {
	h := spec.SpecHash
	if len(h) > 16 {
		h = h[:16]
	}
	return spec.Name + "-" + h
}

// ensureScalingGroup finds the pool's group (by id, or by the tags of an interrupted create) or
// creates it; it answers the group and whether it was adopted.
func (r *nodePoolResource) ensureScalingGroup(ctx context.Context, spec *poolSpec) (*cloud.ScalingGroup, error) {
	found, err := r.client.FindScalingGroupsByTags(ctx, map[string]string{tagPoolName: spec.Name, tagPoolNetwork: spec.Network.ID})
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
	case 1:
		// An earlier apply was killed after creating the group: this pool is that one.
		g := found[0]
		if id := g.Tags[tagPool]; id != "" {
			spec.PoolID = id
		}
		tflog.Info(ctx, "adopting the scaling group of an interrupted earlier apply", map[string]any{"group": g.ID, "pool": spec.PoolID})
		return &g, nil
	default:
		ids := make([]string, 0, len(found))
		for _, g := range found {
			ids = append(ids, g.ID)
		}
		return nil, fmt.Errorf("scaling groups %s all carry pool name %q on network %s: delete all but one, then apply again", strings.Join(ids, ", "), spec.Name, spec.Network.ID)
	}
	in := cloud.ScalingGroupInput{Name: spec.Name + "-" + spec.PoolID, MinSize: spec.Autoscale.Min, MaxSize: spec.Autoscale.Max,
		VSwitchIDs: groupVSwitches(*spec), Spot: spec.Autoscale.Mix, Tags: groupTags(*spec)}
	id, err := cloud.CreateOrAdopt("scaling group", []string{"node-pool-asg", spec.Name, spec.Network.ID},
		func(token string) (string, error) {
			in.ClientToken = token
			return r.client.CreateScalingGroup(ctx, in)
		},
		func(id string) error {
			_, err := r.client.FindScalingGroup(ctx, id)
			return err
		})
	if err != nil {
		return nil, err
	}
	return r.client.FindScalingGroup(ctx, id)
}

// ensureConfiguration answers the id of the group's configuration for these launch settings,
// creating it when none has them; older configurations are deleted once not active.
func (r *nodePoolResource) ensureConfiguration(ctx context.Context, g *cloud.ScalingGroup, spec poolSpec) (string, error) {
	cfgs, err := r.client.FindScalingConfigurations(ctx, g.ID)
	if err != nil {
		return "", err
	}
	name := configurationName(spec)
	tags := configurationTags(spec)
	for _, cf := range cfgs {
		if cf.Name != name {
			continue
		}
		// Tags change in place, as on a fixed pool's nodes: no new configuration, no roll.
		if !maps.Equal(cf.Tags, tags) {
			if err := r.client.SetScalingConfigurationTags(ctx, cf.ID, tags); err != nil {
				return "", err
			}
		}
		return cf.ID, nil
	}
	in := cloud.ScalingConfigurationInput{GroupID: g.ID, Name: name, ImageID: spec.ImageID, RAMRoleName: spec.RAMRole, InstanceTypes: launchTypes(spec),
		SecurityGroupIDs: []string{spec.Network.SecurityGroupID},
		SystemDisk:       cloud.Disk{Category: spec.SystemDisk.Category, PerformanceLevel: spec.SystemDisk.Level, SizeGiB: spec.SystemDisk.SizeGiB},
		UserData:         spec.UserData, HPCClusterID: spec.HPCCluster, ERDMA: spec.ERDMA, Tags: tags,
		ClientToken: cloud.ClientToken(0, "node-pool-asc", g.ID, name)}
	for _, d := range spec.DataDisks {
		in.DataDisks = append(in.DataDisks, cloud.Disk{Category: d.Category, PerformanceLevel: d.Level, SizeGiB: d.SizeGiB})
	}
	if spec.Spot != "NoSpot" {
		in.SpotStrategy, in.SpotPriceLimit = spec.Spot, spec.SpotLimit
	}
	return r.client.CreateScalingConfiguration(ctx, in)
}

// applyAutoscaling creates or updates the pool's scaling group: the group, its configuration,
// its bounds, spot mix and tags, then waits until it holds at least min_size running nodes and
// records them.
func (r *nodePoolResource) applyAutoscaling(ctx context.Context, spec poolSpec, plan *nodePoolModel, diags *diag.Diagnostics) {
	summary := fmt.Sprintf("node pool %q (autoscaling)", spec.Name)
	if spec.Autoscale.Budget > 0 {
		r.checkBudget(ctx, spec, diags)
		if diags.HasError() {
			return
		}
	}
	if len(groupVSwitches(spec)) == 0 {
		diags.AddAttributeError(path.Root("zone_ids"), summary, "none of the pool's zones has a vSwitch in the network")
		return
	}
	g, err := r.ensureScalingGroup(ctx, &spec)
	if err != nil {
		diags.AddError(summary, "creating the scaling group: "+err.Error())
		return
	}
	plan.ID, plan.ScalingGroupID = types.StringValue(spec.PoolID), types.StringValue(g.ID)
	cfgID, err := r.ensureConfiguration(ctx, g, spec)
	if err != nil {
		diags.AddError(summary, "creating the scaling configuration: "+err.Error())
		return
	}
	minSize, maxSize := spec.Autoscale.Min, spec.Autoscale.Max
	mix := spec.Autoscale.Mix
	update := cloud.ScalingGroupUpdate{MinSize: &minSize, MaxSize: &maxSize, VSwitchIDs: groupVSwitches(spec), Spot: &mix}
	if g.State == cloud.ScalingGroupActive && g.ActiveConfigurationID != cfgID {
		update.ActiveConfigurationID = cfgID
	}
	if err := r.client.ModifyScalingGroup(ctx, g.ID, update); err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	if g.State != cloud.ScalingGroupActive {
		if err := r.client.EnableScalingGroup(ctx, g.ID, cfgID); err != nil {
			diags.AddError(summary, err.Error())
			return
		}
	}
	if err := r.client.SyncTags(ctx, cloud.KindScalingGroup, []string{g.ID}, g.Tags, groupTags(spec)); err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	if g.State == cloud.ScalingGroupActive {
		// New launch settings: nodes of older ones are replaced, max_unavailable at a time.
		if err := r.rollAutoscaled(ctx, g.ID, cfgID, spec); err != nil {
			diags.AddError(summary, err.Error())
		}
	}
	r.dropOldConfigurations(ctx, g.ID, cfgID)
	nodes, err := r.waitMinimum(ctx, g.ID, spec)
	if err != nil {
		diags.AddError(summary, err.Error())
	}
	if err := r.retag(ctx, spec, nodes); err != nil {
		diags.AddError(summary, err.Error())
	}
	r.recordAutoscaled(ctx, spec, plan, nodes, diags)
}

// dropOldConfigurations deletes the group's configurations other than the active one; a failure
// only leaves an unused configuration behind, which the next apply deletes.
func (r *nodePoolResource) dropOldConfigurations(ctx context.Context, groupID, active string) {
	cfgs, err := r.client.FindScalingConfigurations(ctx, groupID)
	if err != nil {
		return
	}
	for _, cf := range cfgs {
		if cf.ID != active {
			if err := r.client.DeleteScalingConfiguration(ctx, cf.ID); err != nil {
				tflog.Warn(ctx, "could not delete an old scaling configuration", map[string]any{"configuration": cf.ID, "error": err.Error()})
			}
		}
	}
}

// waitMinimum waits until the group holds min_size nodes and none is still starting, then
// answers the pool's nodes.
func (r *nodePoolResource) waitMinimum(ctx context.Context, groupID string, spec poolSpec) ([]cloud.Instance, error) {
	if err := r.client.WaitScalingGroupSettled(ctx, groupID, spec.Autoscale.Min); err != nil {
		return nil, err
	}
	return r.client.ListInstancesByTags(ctx, map[string]string{tagPool: spec.PoolID})
}

// autoscaledPrice is what the nodes there are now cost per hour: a mixed group's spot and
// pay-as-you-go nodes each at their own price.
func (r *nodePoolResource) autoscaledPrice(ctx context.Context, spec poolSpec, nodes []cloud.Instance, diags *diag.Diagnostics) float64 {
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
	}{{"", len(nodes) - spot}, {spotStrategyForPrice(spec), spot}} {
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
func (r *nodePoolResource) recordAutoscaled(ctx context.Context, spec poolSpec, plan *nodePoolModel, nodes []cloud.Instance, diags *diag.Diagnostics) {
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

// deleteAutoscaled deletes the group with its nodes and waits until both are gone. It counts the
// pool's tagged instances rather than waiting for a list taken before the delete: a scale-out
// activity running at that moment launches nodes the list would not hold. Nodes that stop going
// (the group let go of them) are deleted directly.
func (r *nodePoolResource) deleteAutoscaled(ctx context.Context, state *nodePoolModel) error {
	if err := r.client.DeleteScalingGroup(ctx, state.ScalingGroupID.ValueString()); err != nil {
		return err
	}
	tags := map[string]string{tagPool: state.ID.ValueString()}
	for {
		err := r.client.WaitTaggedInstancesGone(ctx, tags, deleteStallRounds)
		if !errors.Is(err, cloud.ErrInstancesStalled) {
			return err
		}
		left, err := r.client.ListInstancesByTags(ctx, tags)
		if err != nil {
			return err
		}
		if err := r.client.DeleteInstances(ctx, instanceIDs(left)); err != nil {
			return err
		}
	}
}

// rollAutoscaled replaces the group's nodes launched from older configurations, at most
// max_unavailable at a time: the group first grows by a wave (its new nodes come from the active
// configuration) and, once they run, the wave's outdated nodes are removed, so the capacity the
// autoscaler asked for never drops. At max_size there is no room to grow: the wave is removed
// first and the group brought back to its size (down to min_size, never below).
func (r *nodePoolResource) rollAutoscaled(ctx context.Context, groupID, cfgID string, spec poolSpec) error {
	for wave := 1; ; wave++ {
		inst, err := r.client.ScalingInstances(ctx, groupID)
		if err != nil {
			return err
		}
		var outdated []string
		for _, in := range inst {
			if in.ConfigurationID != cfgID {
				outdated = append(outdated, in.InstanceID)
			}
		}
		if len(outdated) == 0 {
			return nil
		}
		total := len(inst)
		k := min(spec.MaxUnavail, len(outdated))
		tflog.Info(ctx, fmt.Sprintf("rolling scaling group %s: wave %d replaces %d of %d outdated nodes", groupID, wave, k, len(outdated)))
		token := func(step string, n int) string {
			return cloud.ClientToken(0, "asg-roll", groupID, cfgID, step, strconv.Itoa(wave), strconv.Itoa(n))
		}
		switch {
		case total+k <= spec.Autoscale.Max:
			if _, err := r.client.ScaleTo(ctx, groupID, total+k, token("grow", total+k)); err != nil {
				return err
			}
			if err := r.client.WaitScalingGroupSettled(ctx, groupID, total+k); err != nil {
				return err
			}
			if _, err := r.client.RemoveScalingInstances(ctx, groupID, outdated[:k]); err != nil {
				return err
			}
		case total-k >= spec.Autoscale.Min:
			if _, err := r.client.RemoveScalingInstances(ctx, groupID, outdated[:k]); err != nil {
				return err
			}
			if _, err := r.client.ScaleTo(ctx, groupID, total, token("refill", total)); err != nil {
				return err
			}
			if err := r.client.WaitScalingGroupSettled(ctx, groupID, total); err != nil {
				return err
			}
		default:
			return fmt.Errorf("scaling group %s holds %d nodes with min_size = max_size = %d: no room to replace the %d outdated nodes. "+
				"Raise autoscaling.max_size by update_strategy.max_unavailable for the roll", groupID, total, spec.Autoscale.Max, len(outdated))
		}
	}
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
