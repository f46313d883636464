package cloud

import (
	"strings"
	"testing"
)

// A scaling group's life through this package against the emulator: created (a retried create
// with the same token adopts the first group), configured, enabled, scaled out, found by tags,
// re-tagged, scaled in by name, refused below MinSize, and deleted with every instance.
func TestScalingGroupLifecycle(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24", "10.0.2.0/24")
	sgID, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: net.vpcID, Name: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{"gpucluster:cluster": "asg-test", "gpucluster:pool": "gpu"}
	in := ScalingGroupInput{Name: "asg-test-gpu", MinSize: 1, MaxSize: 6, VSwitchIDs: []string{net.vswitches[0].ID, net.vswitches[1].ID},
		Spot: AllOnDemand, Tags: tags}
	parts := []string{"asg", "asg-test-gpu"}
	create := func(token string) (string, error) {
		in.ClientToken = token
		return c.CreateScalingGroup(ctx, in)
	}
	exists := func(id string) error {
		_, err := c.FindScalingGroup(ctx, id)
		return err
	}
	id, err := CreateOrAdopt("scaling group", parts, create, exists)
	if err != nil {
		t.Fatal(err)
	}
	again, err := CreateOrAdopt("scaling group", parts, create, exists)
	if err != nil || again != id {
		t.Fatalf("a second create with the same token gave %q, %v; want the first group %s", again, err, id)
	}
	g, err := c.FindScalingGroup(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if g.State != ScalingGroupInactive || g.MinSize != 1 || g.MaxSize != 6 || len(g.VSwitchIDs) != 2 || g.VPCID != net.vpcID {
		t.Errorf("new group = %+v", g)
	}
	assertTags(t, "scaling group", g.Tags, tags)

	cfgID, err := c.CreateScalingConfiguration(ctx, ScalingConfigurationInput{GroupID: id, Name: "gpu-v1",
		ImageID: "ubuntu_22_04_x64_20G_alibase_20240101.vhd", InstanceTypes: []string{"ecs.gn7i-c8g1.2xlarge", "ecs.gn6i-c4g1.xlarge"},
		SecurityGroupIDs: []string{sgID}, SystemDisk: Disk{Category: "cloud_essd", SizeGiB: 100},
		DataDisks: []Disk{{Category: "cloud_essd", SizeGiB: 200}}, UserData: "#!/bin/sh\necho join\n", Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnableScalingGroup(ctx, id, cfgID); err != nil {
		t.Fatal(err)
	}
	if err := c.EnableScalingGroup(ctx, id, cfgID); err != nil {
		t.Fatalf("enabling an Active group again: %v", err)
	}
	cfgs, err := c.FindScalingConfigurations(ctx, id)
	if err != nil || len(cfgs) != 1 || cfgs[0].State != "Active" || len(cfgs[0].InstanceTypes) != 2 {
		t.Fatalf("configurations = %+v, %v", cfgs, err)
	}
	assertTags(t, "scaling configuration", cfgs[0].Tags, tags)

	act, err := c.ScaleTo(ctx, id, 5, ClientToken(0, "scale", id, "5"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.WaitActivity(ctx, id, act)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != ActivitySuccessful {
		t.Fatalf("scale-out activity %+v", a)
	}
	inst, err := c.ScalingInstances(ctx, id)
	if err != nil || len(inst) != 5 {
		t.Fatalf("ScalingInstances = %d, %v; want 5", len(inst), err)
	}
	for _, i := range inst {
		if i.State != "InService" || i.ConfigurationID != cfgID || i.InstanceType != "ecs.gn7i-c8g1.2xlarge" {
			t.Errorf("instance %+v", i)
		}
	}
	found, err := c.FindScalingGroupsByTags(ctx, tags)
	if err != nil || len(found) != 1 || found[0].ID != id || found[0].TotalCapacity != 5 || found[0].State != ScalingGroupActive {
		t.Fatalf("FindScalingGroupsByTags = %+v, %v", found, err)
	}
	moved := map[string]string{"gpucluster:cluster": "asg-test", "gpucluster:pool": "gpu", "team": "ml"}
	if err := c.SyncTags(ctx, KindScalingGroup, []string{id}, tags, moved); err != nil {
		t.Fatal(err)
	}
	if g, _ = c.FindScalingGroup(ctx, id); g != nil {
		assertTags(t, "scaling group after SyncTags", g.Tags, moved)
	}

	if _, err := c.RemoveScalingInstances(ctx, id, []string{inst[0].InstanceID, inst[1].InstanceID}); err != nil {
		t.Fatal(err)
	}
	if inst, _ = c.ScalingInstances(ctx, id); len(inst) != 3 {
		t.Fatalf("%d instances after removing 2, want 3", len(inst))
	}
	_, err = c.RemoveScalingInstances(ctx, id, []string{inst[0].InstanceID, inst[1].InstanceID, inst[2].InstanceID})
	if !IsCode(err, "IncorrectCapacity.MinSize") {
		t.Fatalf("removing below MinSize: %v, want IncorrectCapacity.MinSize", err)
	}
	four := 4
	if err := c.ModifyScalingGroup(ctx, id, ScalingGroupUpdate{MinSize: &four}); err != nil {
		t.Fatal(err)
	}
	if g, _ = c.FindScalingGroup(ctx, id); g == nil || g.MinSize != 4 {
		t.Fatalf("after ModifyScalingGroup: %+v", g)
	}

	if err := c.DeleteScalingGroup(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FindScalingGroup(ctx, id); !IsNotFound(err) {
		t.Fatalf("FindScalingGroup after delete: %v, want not found", err)
	}
	if n := len(srv.Resources().Instances); n != 0 {
		t.Fatalf("%d instances left after deleting the group", n)
	}
	if err := c.DeleteScalingGroup(ctx, id); err != nil {
		t.Fatalf("deleting a group already gone: %v", err)
	}
}

// A group that cannot reach its minimum (no stock in any zone) fails the wait with the
// activity's error instead of waiting until the timeout.
func TestWaitScalingGroupSettledFailsOnStockOut(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	sgID, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: net.vpcID, Name: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetCapacity(map[string]map[string]int{testRegion + "-a": {"ecs.gn7i-c8g1.2xlarge": 0}})
	id, err := c.CreateScalingGroup(ctx, ScalingGroupInput{Name: "empty", MinSize: 2, MaxSize: 4, VSwitchIDs: []string{net.vswitches[0].ID}, Spot: AllOnDemand})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.CreateScalingConfiguration(ctx, ScalingConfigurationInput{GroupID: id, ImageID: "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
		InstanceTypes: []string{"ecs.gn7i-c8g1.2xlarge"}, SecurityGroupIDs: []string{sgID}, SystemDisk: Disk{Category: "cloud_essd", SizeGiB: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnableScalingGroup(ctx, id, cfg); err != nil {
		t.Fatal(err)
	}
	err = c.WaitScalingGroupSettled(ctx, id, 2)
	if err == nil || !strings.Contains(err.Error(), "OperationDenied.NoStock") || ctx.Err() != nil {
		t.Fatalf("WaitScalingGroupSettled = %v; want the stock-out named before the context ends", err)
	}
}
