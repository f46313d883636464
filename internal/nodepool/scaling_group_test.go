package nodepool

import (
	"errors"
	"maps"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

func autoscaled(spec Spec, minSize, maxSize int) Spec {
	spec.Autoscale = &Autoscale{Min: minSize, Max: maxSize, Mix: cloud.AllOnDemand}
	spec.Size, spec.MinSize = maxSize, minSize
	return spec
}

func TestApplyAutoscalingStartsTheGroupAtMinSize(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 2, 4)
	res, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("ApplyAutoscaling: %v", err)
	}
	if res.GroupID == "" || res.PoolID != spec.PoolID || !res.NodesRead || len(res.Nodes) != 2 {
		t.Fatalf("result = %+v, want the group, pool %s and its 2 nodes", res, spec.PoolID)
	}
	g, err := c.Client.FindScalingGroup(ctx, res.GroupID)
	if err != nil {
		t.Fatalf("FindScalingGroup: %v", err)
	}
	if g.MinSize != 2 || g.MaxSize != 4 || g.State != cloud.ScalingGroupActive {
		t.Errorf("group min %d max %d state %s, want 2, 4, active", g.MinSize, g.MaxSize, g.State)
	}
	if !maps.Equal(g.Tags, GroupTags(spec)) {
		t.Errorf("group tags = %v, want %v", g.Tags, GroupTags(spec))
	}
}

// A create killed after the group was made, before the state saved it: the next apply (with a
// new pool id) adopts the group and takes its pool id, and creates no second group.
func TestApplyAutoscalingAdoptsTheGroupOfAnInterruptedCreate(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 1, 3)
	first, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("first (interrupted) apply: %v", err)
	}
	spec.PoolID = NewPoolID()
	again, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if again.GroupID != first.GroupID || again.PoolID != first.PoolID {
		t.Errorf("second apply answered group %s of pool %s, want the first's %s of %s", again.GroupID, again.PoolID, first.GroupID, first.PoolID)
	}
	if n := c.Calls("CreateScalingGroup"); n != 1 {
		t.Errorf("%d CreateScalingGroup calls, want 1", n)
	}
}

// New launch settings make a new configuration and replace the nodes of the old one; the old
// configuration is deleted.
func TestApplyAutoscalingRollsNodesOfAnOlderConfiguration(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 2, 3)
	first, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	spec.SpecHash = "spec-v2"
	res, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	oldIDs := map[string]bool{}
	for _, n := range first.Nodes {
		oldIDs[n.ID] = true
	}
	if len(res.Nodes) < 2 {
		t.Fatalf("%d nodes after the roll, want at least min_size 2", len(res.Nodes))
	}
	for _, n := range poolNodes(ctx, t, c, spec.PoolID) {
		if oldIDs[n.ID] {
			t.Errorf("node %s of the old configuration is still there", n.ID)
		}
	}
	cfgs, err := c.Client.FindScalingConfigurations(ctx, res.GroupID)
	if err != nil {
		t.Fatalf("FindScalingConfigurations: %v", err)
	}
	if len(cfgs) != 1 || cfgs[0].Name != configurationName(spec) {
		t.Errorf("configurations = %+v, want only %s", cfgs, configurationName(spec))
	}
}

func TestApplyAutoscalingWithoutAVSwitchInItsZones(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 0, 2)
	spec.Zones = []string{"cn-wulanchabu-c"}
	if _, err := ApplyAutoscaling(ctx, c.Client, spec); !errors.Is(err, ErrNoZoneVSwitch) {
		t.Fatalf("ApplyAutoscaling = %v, want ErrNoZoneVSwitch", err)
	}
	if n := c.Calls("CreateScalingGroup"); n != 0 {
		t.Errorf("%d CreateScalingGroup calls, want none", n)
	}
}

func TestDeleteScalingGroupRemovesItsNodes(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 2, 2)
	res, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := DeleteScalingGroup(ctx, c.Client, res.PoolID, res.GroupID); err != nil {
		t.Fatalf("DeleteScalingGroup: %v", err)
	}
	if left := poolNodes(ctx, t, c, res.PoolID); len(left) != 0 {
		t.Errorf("%d nodes left", len(left))
	}
	if _, err := c.Client.FindScalingGroup(ctx, res.GroupID); !cloud.IsNotFound(err) {
		t.Errorf("FindScalingGroup after delete = %v, want not found", err)
	}
}

// The configuration carries the built-in node labels for scale from zero, and TagCount counts
// them for an autoscaling pool only.
func TestConfigurationTagsCarryTheTemplateLabels(t *testing.T) {
	spec := Spec{PoolID: "np-1", Name: "gpu", SpecHash: "h", UserTags: map[string]string{"team": "ml"},
		Labels: map[string]string{bootstrap.PoolLabel: "gpu", bootstrap.GPUProductLabel: "A10", "custom": "x"}}
	tags := ConfigurationTags(spec)
	if tags[bootstrap.PoolLabel] != "gpu" || tags[bootstrap.GPUProductLabel] != "A10" || tags[tagging.Spec] != "h" || tags["team"] != "ml" {
		t.Errorf("configuration tags %v lack a label, the spec hash or a user tag", tags)
	}
	if _, ok := tags["custom"]; ok {
		t.Errorf("a user label became a tag: %v", tags)
	}
	fixedOwn, _ := TagCount(spec)
	spec.Autoscale = &Autoscale{Max: 1}
	own, labels := TagCount(spec)
	if labels != 2 || own != fixedOwn-1+2 {
		t.Errorf("TagCount autoscaling = (%d, %d), fixed own %d: want the 2 labels on top, and not the fixed pool's slot kept for %s", own, labels, fixedOwn, tagging.ReplaceRequested)
	}
	if n := len(NodeTags(Spec{PoolID: "np-1", Name: "gpu", SpecHash: "h"})); fixedOwn != n+1 {
		t.Errorf("TagCount fixed own = %d for %d node tags: want one kept free for %s", fixedOwn, n, tagging.ReplaceRequested)
	}
}
