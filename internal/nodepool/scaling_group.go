package nodepool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// A node pool's autoscaling mode: an Auto Scaling (ESS) scaling group sized by the Kubernetes
// Cluster Autoscaler. Terraform owns the bounds and the launch settings (the scaling
// configuration); the autoscaler owns the current size, which no plan shows as a change.

// ErrNoZoneVSwitch: none of the pool's zones has a vSwitch in the network, so the group would
// have nowhere to launch. The provider puts it on zone_ids.
var ErrNoZoneVSwitch = errors.New("none of the pool's zones has a vSwitch in the network")

// AutoscaleResult is what ApplyAutoscaling got to. GroupID is set once the group exists, so the
// state records it whatever failed after; PoolID is the spec's, or the one of the group an
// interrupted create left (adopted). NodesRead is true when the workflow got as far as reading
// the pool's nodes (Nodes, possibly none), which the state then records.
type AutoscaleResult struct {
	PoolID    string
	GroupID   string
	Nodes     []cloud.Instance
	NodesRead bool
	// Warnings name the nodes a roll removed without a graceful stop (they did not stop in time).
	Warnings []string
}

// ApplyAutoscaling creates or updates the pool's scaling group: the group, its configuration,
// its bounds, spot mix and tags, rolls the nodes of older configurations, then waits until the
// group holds at least min_size running nodes and reads them. Failures of the roll, the wait and
// the retag do not stop the nodes from being read; they come back joined (errors.Join).
func ApplyAutoscaling(ctx context.Context, c *cloud.Client, spec Spec) (AutoscaleResult, error) {
	res := AutoscaleResult{PoolID: spec.PoolID}
	if len(GroupVSwitches(spec)) == 0 {
		return res, ErrNoZoneVSwitch
	}
	g, err := ensureScalingGroup(ctx, c, &spec)
	if err != nil {
		return res, fmt.Errorf("creating the scaling group: %w", err)
	}
	res.PoolID, res.GroupID = spec.PoolID, g.ID
	cfgID, err := ensureConfiguration(ctx, c, g, spec)
	if err != nil {
		return res, fmt.Errorf("creating the scaling configuration: %w", err)
	}
	drained, err := drainAboveMax(ctx, c, g, spec)
	res.Warnings = drained
	if err != nil {
		return res, err
	}
	if err := setGroup(ctx, c, g, cfgID, spec); err != nil {
		return res, err
	}
	var errs []error
	if g.State == cloud.ScalingGroupActive {
		// New launch settings: nodes of older ones are replaced, max_unavailable at a time.
		warnings, err := rollAutoscaled(ctx, c, g.ID, cfgID, spec)
		res.Warnings = append(res.Warnings, warnings...)
		errs = append(errs, err)
	}
	dropOldConfigurations(ctx, c, g.ID, cfgID)
	nodes, err := waitMinimum(ctx, c, g.ID, spec)
	errs = append(errs, err, Retag(ctx, c, spec, nodes))
	res.Nodes, res.NodesRead = nodes, true
	return res, errors.Join(errs...)
}

// drainAboveMax removes, drained (removeDrained), the nodes a lower max_size leaves no room for,
// before the new bounds are set: Auto Scaling would otherwise remove them itself at once,
// without stopping them first (ModifyScalingGroup: "If the number of instances in the scaling
// group is greater than the value of MaxSize, Auto Scaling removes instances",
// https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2022-02-22-modifyscalinggroup).
// It takes the ones the group would: those of older configurations first, then the oldest. The
// group's min_size is lowered first when it would refuse the removal.
func drainAboveMax(ctx context.Context, c *cloud.Client, g *cloud.ScalingGroup, spec Spec) (warnings []string, err error) {
	if g.State != cloud.ScalingGroupActive || g.TotalCapacity <= spec.Autoscale.Max {
		return nil, nil
	}
	inst, err := c.ScalingInstances(ctx, g.ID)
	if err != nil || len(inst) <= spec.Autoscale.Max {
		return nil, err
	}
	slices.SortStableFunc(inst, func(a, b cloud.ScalingInstance) int {
		aOld, bOld := a.ConfigurationID != g.ActiveConfigurationID, b.ConfigurationID != g.ActiveConfigurationID
		if aOld != bOld {
			if aOld {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Added, b.Added)
	})
	excess := inst[:len(inst)-spec.Autoscale.Max]
	if g.MinSize > len(inst)-len(excess) {
		minSize := spec.Autoscale.Min
		if err := c.ModifyScalingGroup(ctx, g.ID, cloud.ScalingGroupUpdate{MinSize: &minSize}); err != nil {
			return nil, err
		}
	}
	tflog.Info(ctx, fmt.Sprintf("scaling group %s holds %d nodes, above max_size %d: draining and removing %d", g.ID, len(inst), spec.Autoscale.Max, len(excess)))
	return removeDrained(ctx, c, g.ID, excess)
}

// setGroup brings the group's bounds, vSwitches, spot mix, active configuration and tags to the
// spec, and enables a group that is not active yet.
func setGroup(ctx context.Context, c *cloud.Client, g *cloud.ScalingGroup, cfgID string, spec Spec) error {
	minSize, maxSize := spec.Autoscale.Min, spec.Autoscale.Max
	mix := spec.Autoscale.Mix
	update := cloud.ScalingGroupUpdate{MinSize: &minSize, MaxSize: &maxSize, VSwitchIDs: GroupVSwitches(spec), Spot: &mix}
	if g.State == cloud.ScalingGroupActive && g.ActiveConfigurationID != cfgID {
		update.ActiveConfigurationID = cfgID
	}
	if err := c.ModifyScalingGroup(ctx, g.ID, update); err != nil {
		return err
	}
	if g.State != cloud.ScalingGroupActive {
		if err := c.EnableScalingGroup(ctx, g.ID, cfgID); err != nil {
			return err
		}
	}
	return c.SyncTags(ctx, cloud.KindScalingGroup, []string{g.ID}, g.Tags, GroupTags(spec))
}

// GroupVSwitches are the vSwitches of the pool's zones, in zone_ids order (the group's
// priority).
func GroupVSwitches(spec Spec) []string {
	var out []string
	for _, z := range spec.Zones {
		if v := spec.Network.VSwitchIDs[z]; v != "" && len(out) < cloud.MaxScalingVSwitches {
			out = append(out, v)
		}
	}
	return out
}

// LaunchTypes is the configuration's instance-type priority list: the planned type, then with
// instance_type_fallback the catalog's next candidates.
func LaunchTypes(spec Spec) []string {
	if !spec.Fallback {
		return spec.Types[:1]
	}
	return spec.Types[:min(len(spec.Types), cloud.MaxScalingInstanceTypes)]
}

// configurationName names a scaling configuration after the launch settings it holds, so an
// apply finds the one it made before.
func configurationName(spec Spec) string {
	h := spec.SpecHash
	if len(h) > 16 {
		h = h[:16]
	}
	return spec.Name + "-" + h
}

// ensureScalingGroup finds the pool's group (by the tags of an interrupted create) or creates
// it. On adoption spec.PoolID becomes the adopted group's pool id.
func ensureScalingGroup(ctx context.Context, c *cloud.Client, spec *Spec) (*cloud.ScalingGroup, error) {
	found, err := c.FindScalingGroupsByTags(ctx, map[string]string{tagging.PoolName: spec.Name, tagging.PoolNetwork: spec.Network.ID})
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
	case 1:
		// An earlier apply was killed after creating the group: this pool is that one.
		g := found[0]
		if id := g.Tags[tagging.Pool]; id != "" {
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
		VSwitchIDs: GroupVSwitches(*spec), Spot: spec.Autoscale.Mix, Tags: GroupTags(*spec)}
	id, err := cloud.CreateOrAdopt("scaling group", []string{"node-pool-asg", spec.Name, spec.Network.ID},
		func(token string) (string, error) {
			in.ClientToken = token
			return c.CreateScalingGroup(ctx, in)
		},
		func(id string) error {
			_, err := c.FindScalingGroup(ctx, id)
			return err
		})
	if err != nil {
		return nil, err
	}
	return c.FindScalingGroup(ctx, id)
}

// ensureConfiguration answers the id of the group's configuration for these launch settings,
// creating it when none has them; older configurations are deleted once not active.
func ensureConfiguration(ctx context.Context, c *cloud.Client, g *cloud.ScalingGroup, spec Spec) (string, error) {
	cfgs, err := c.FindScalingConfigurations(ctx, g.ID)
	if err != nil {
		return "", err
	}
	name := configurationName(spec)
	tags := ConfigurationTags(spec)
	for _, cf := range cfgs {
		if cf.Name != name {
			continue
		}
		// Tags change in place, as on a fixed pool's nodes: no new configuration, no roll.
		if !maps.Equal(cf.Tags, tags) {
			if err := c.SetScalingConfigurationTags(ctx, cf.ID, tags); err != nil {
				return "", err
			}
		}
		return cf.ID, nil
	}
	in := cloud.ScalingConfigurationInput{GroupID: g.ID, Name: name, ImageID: spec.ImageID, RAMRoleName: spec.RAMRole, InstanceTypes: LaunchTypes(spec),
		SecurityGroupIDs: []string{spec.Network.SecurityGroupID},
		SystemDisk:       spec.SystemDisk.cloudDisk(),
		UserData:         spec.UserData, HPCClusterID: spec.HPCCluster, ERDMA: spec.ERDMA, Tags: tags,
		ClientToken: cloud.ClientToken(0, "node-pool-asc", g.ID, name)}
	for _, d := range spec.DataDisks {
		in.DataDisks = append(in.DataDisks, d.cloudDisk())
	}
	if spec.Spot != "NoSpot" {
		in.SpotStrategy, in.SpotPriceLimit = spec.Spot, spec.SpotLimit
	}
	return c.CreateScalingConfiguration(ctx, in)
}

// dropOldConfigurations deletes the group's configurations other than the active one; a failure
// only leaves an unused configuration behind, which the next apply deletes.
func dropOldConfigurations(ctx context.Context, c *cloud.Client, groupID, active string) {
	cfgs, err := c.FindScalingConfigurations(ctx, groupID)
	if err != nil {
		return
	}
	for _, cf := range cfgs {
		if cf.ID != active {
			if err := c.DeleteScalingConfiguration(ctx, cf.ID); err != nil {
				tflog.Warn(ctx, "could not delete an old scaling configuration", map[string]any{"configuration": cf.ID, "error": err.Error()})
			}
		}
	}
}

// waitMinimum waits until the group holds min_size nodes and none is still starting, then
// answers the pool's nodes.
func waitMinimum(ctx context.Context, c *cloud.Client, groupID string, spec Spec) ([]cloud.Instance, error) {
	if err := c.WaitScalingGroupSettled(ctx, groupID, spec.Autoscale.Min); err != nil {
		return nil, err
	}
	return c.ListInstancesByTags(ctx, map[string]string{tagging.Pool: spec.PoolID})
}

// DeleteScalingGroup drains the group's nodes, deletes the group with whatever it still holds and
// waits until both are gone. Auto Scaling stops and releases the In Service instances of a group
// it deletes, but says nothing of waiting for their guests to shut down
// (https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2022-02-22-deletescalinggroup),
// so the nodes are first taken out as a roll takes them (drainGroup): each stopped normally within
// StopTimeout, so that the kubelet's graceful node shutdown ends its pods, and the warnings name
// those that did not stop in time. It counts the pool's
// tagged instances rather than waiting for a list taken before the delete: a scale-out activity
// running at that moment launches nodes the list would not hold. Nodes that stop going (the
// group let go of them) are deleted directly.
func DeleteScalingGroup(ctx context.Context, c *cloud.Client, poolID, groupID string) (warnings []string, err error) {
	if warnings, err = drainGroup(ctx, c, groupID); err != nil {
		return warnings, err
	}
	if err := c.DeleteScalingGroup(ctx, groupID); err != nil {
		return warnings, err
	}
	tags := map[string]string{tagging.Pool: poolID}
	for {
		err := c.WaitTaggedInstancesGone(ctx, tags, deleteStallRounds)
		if !errors.Is(err, cloud.ErrInstancesStalled) {
			return warnings, err
		}
		left, err := c.ListInstancesByTags(ctx, tags)
		if err != nil {
			return warnings, err
		}
		if err := c.DeleteInstances(ctx, InstanceIDs(left)); err != nil {
			return warnings, err
		}
	}
}

// drainGroup takes every node out of a group that is about to be deleted, drained
// (removeDrained), after lowering min_size to 0, below which RemoveInstances refuses. A group
// already gone, or not active (it launches nothing and was never given nodes by this provider),
// is left to the delete.
func drainGroup(ctx context.Context, c *cloud.Client, groupID string) (warnings []string, err error) {
	g, err := c.FindScalingGroup(ctx, groupID)
	if errors.Is(err, cloud.ErrNotFound) {
		return nil, nil
	}
	if err != nil || g.State != cloud.ScalingGroupActive {
		return nil, err
	}
	inst, err := c.ScalingInstances(ctx, groupID)
	if err != nil || len(inst) == 0 {
		return nil, err
	}
	if g.MinSize > 0 {
		zero := 0
		if err := c.ModifyScalingGroup(ctx, groupID, cloud.ScalingGroupUpdate{MinSize: &zero}); err != nil {
			return nil, err
		}
	}
	tflog.Info(ctx, fmt.Sprintf("deleting scaling group %s: draining and removing its %d nodes first", groupID, len(inst)))
	return removeDrained(ctx, c, groupID, inst)
}
