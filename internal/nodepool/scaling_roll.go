package nodepool

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// rollAutoscaled replaces the group's nodes launched from older configurations, at most
// max_unavailable at a time: the group first grows by a wave (its new nodes come from the active
// configuration) and, once they run, the wave's outdated nodes are removed, so the capacity the
// autoscaler asked for never drops. At max_size there is no room to grow: the wave is removed
// first and the group brought back to its size (down to min_size, never below). Each removed
// node is drained first (removeDrained); the warnings name those that did not stop in time.
func rollAutoscaled(ctx context.Context, c *cloud.Client, groupID, cfgID string, spec Spec) (warnings []string, err error) {
	for wave := 1; ; wave++ {
		inst, err := c.ScalingInstances(ctx, groupID)
		if err != nil {
			return warnings, err
		}
		var outdated []cloud.ScalingInstance
		for _, in := range inst {
			if in.ConfigurationID != cfgID {
				outdated = append(outdated, in)
			}
		}
		if len(outdated) == 0 {
			return warnings, nil
		}
		total := len(inst)
		k := min(spec.MaxUnavail, len(outdated))
		tflog.Info(ctx, fmt.Sprintf("rolling scaling group %s: wave %d replaces %d of %d outdated nodes", groupID, wave, k, len(outdated)))
		token := func(step string, n int) string {
			return cloud.ClientToken(0, "asg-roll", groupID, cfgID, step, strconv.Itoa(wave), strconv.Itoa(n))
		}
		remove := func() error {
			drained, err := drainScalingNodes(ctx, c, spec, outdated[:k])
			warnings = append(warnings, drained...)
			if err != nil {
				return err
			}
			late, err := removeDrained(ctx, c, groupID, outdated[:k])
			warnings = append(warnings, late...)
			return err
		}
		switch {
		case total+k <= spec.Autoscale.Max:
			if _, err := c.ScaleTo(ctx, groupID, total+k, token("grow", total+k)); err != nil {
				return warnings, err
			}
			if err := c.WaitScalingGroupSettled(ctx, groupID, total+k); err != nil {
				return warnings, err
			}
			if err := waitNewJoined(ctx, c, groupID, spec, inst); err != nil {
				return warnings, err
			}
			if err := remove(); err != nil {
				return warnings, err
			}
		case total-k >= spec.Autoscale.Min:
			if err := remove(); err != nil {
				return warnings, err
			}
			if _, err := c.ScaleTo(ctx, groupID, total, token("refill", total)); err != nil {
				return warnings, err
			}
			if err := c.WaitScalingGroupSettled(ctx, groupID, total); err != nil {
				return warnings, err
			}
			if err := waitNewJoined(ctx, c, groupID, spec, inst); err != nil {
				return warnings, err
			}
		default:
			return warnings, fmt.Errorf("scaling group %s holds %d nodes with min_size = max_size = %d: no room to replace the %d outdated nodes. "+
				"Raise autoscaling.max_size by update_strategy.max_unavailable for the roll", groupID, total, spec.Autoscale.Max, len(outdated))
		}
	}
}

// waitNewJoined waits (WaitJoined) for the group's instances that were not among before to join
// the cluster: the outdated nodes go, or the next wave starts, only once they have.
func waitNewJoined(ctx context.Context, c *cloud.Client, groupID string, spec Spec, before []cloud.ScalingInstance) error {
	if spec.JoinTimeout <= 0 {
		return nil
	}
	now, err := c.ScalingInstances(ctx, groupID)
	if err != nil {
		return err
	}
	var joining []string
	for _, in := range now {
		if !slices.ContainsFunc(before, func(b cloud.ScalingInstance) bool { return b.InstanceID == in.InstanceID }) {
			joining = append(joining, in.InstanceID)
		}
	}
	return WaitJoined(ctx, c, spec.Name, joining, spec.JoinTimeout)
}

// drainScalingNodes drains a wave's outdated nodes before they go, as a fixed pool's roll does
// (DrainNodes): while they are still In Service, so a budget that keeps their pods leaves the
// group as it was.
func drainScalingNodes(ctx context.Context, c *cloud.Client, spec Spec, nodes []cloud.ScalingInstance) ([]string, error) {
	if spec.DrainTimeout <= 0 {
		return nil, nil
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.InstanceID
	}
	current, err := c.DescribeInstancesByID(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("reading the nodes to drain: %w", err)
	}
	return DrainNodes(ctx, c, spec, current, ids)
}

// removeDrained takes nodes out of a scaling group the way RemoveNodes takes them out of a fixed
// pool: a normal stop first, so each node's kubelet terminates its pods gracefully, then the
// removal, which releases them. The nodes enter Standby before they stop: a stopped instance is
// unhealthy to Auto Scaling, which would otherwise remove it and launch a replacement on its own
// while the stop runs (see internal/emulator/ess/health.go for the vendor's rules).
//
// Only In Service nodes can enter Standby: one already there (an apply that stopped half-way
// left it so) is stopped and removed with the others.
func removeDrained(ctx context.Context, c *cloud.Client, groupID string, nodes []cloud.ScalingInstance) (warnings []string, err error) {
	ids := make([]string, len(nodes))
	var inService []string
	for i, n := range nodes {
		ids[i] = n.InstanceID
		if n.State == cloud.ScalingInstanceInService {
			inService = append(inService, n.InstanceID)
		}
	}
	if len(inService) > 0 {
		if err := c.EnterStandby(ctx, groupID, inService); err != nil {
			return nil, err
		}
	}
	if warnings, err = stopFirst(ctx, c, ids); err != nil {
		return warnings, err
	}
	_, err = c.RemoveScalingInstances(ctx, groupID, ids)
	return warnings, err
}
