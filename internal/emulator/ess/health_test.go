package ess

import (
	"slices"
	"testing"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/producttest"
)

// The health check removes and releases a stopped In Service instance at the next ESS write and
// launches its replacement; a stopped Standby instance stays, answers LifecycleState Standby, and
// RemoveInstances still takes it out.
func TestHealthCheckSparesStandby(t *testing.T) {
	w := producttest.NewWorld()
	f := useFakeECS(t, w, 10)
	g := enabledGroup(t, w, 2, 4)
	ids := func() []string {
		out := do(t, w, describeScalingInstances, core.Params{"ScalingGroupId": g}).(*esssdk.DescribeScalingInstancesResponse)
		var got []string
		for _, in := range out.ScalingInstances.ScalingInstance {
			got = append(got, in.InstanceId+"="+in.LifecycleState)
		}
		return got
	}
	var members []string
	for id := range f.instances {
		members = append(members, id)
	}
	slices.Sort(members)
	standby, plain := members[0], members[1]
	do(t, w, enterStandby, core.Params{"ScalingGroupId": g, "InstanceId.1": standby})
	for _, id := range members {
		in := f.instances[id]
		in.Status = "Stopped"
		f.instances[id] = in
	}
	// Any write runs the check: here entering Standby again is refused (the instance is not In
	// Service), but the check has run by then.
	if _, e := w.Call(handle(enterStandby), Version, core.Params{"ScalingGroupId": g, "InstanceId.1": standby}); e == nil || e.Code != "IncorrectInstanceStatus" {
		t.Fatalf("EnterStandby of a Standby instance: %v, want IncorrectInstanceStatus", e)
	}
	if !slices.Equal(f.released, []string{plain}) {
		t.Fatalf("released %v, want only the stopped In Service instance %s", f.released, plain)
	}
	got := ids()
	if len(got) != 2 || !slices.Contains(got, standby+"=Standby") || slices.Contains(got, plain+"=InService") {
		t.Fatalf("group members %v, want %s Standby and one replacement", got, standby)
	}
	do(t, w, modifyScalingGroup, core.Params{"ScalingGroupId": g, "MinSize": "1"})
	do(t, w, removeScalingInstances, core.Params{"ScalingGroupId": g, "InstanceId.1": standby, "DecreaseDesiredCapacity": "false"})
	if !slices.Contains(f.released, standby) {
		t.Fatalf("RemoveInstances of the Standby instance did not release it: released %v", f.released)
	}
}

// SetInstanceHealth Unhealthy has the group remove and release the instance at once and launch
// its replacement; an unknown instance and a status other than Healthy/Unhealthy are refused.
func TestSetInstanceHealthReplaces(t *testing.T) {
	w := producttest.NewWorld()
	f := useFakeECS(t, w, 10)
	g := enabledGroup(t, w, 2, 4)
	var members []string
	for id := range f.instances {
		members = append(members, id)
	}
	slices.Sort(members)
	do(t, w, setInstanceHealth, core.Params{"InstanceId": members[0], "HealthStatus": "Unhealthy"})
	if !slices.Equal(f.released, members[:1]) {
		t.Fatalf("released %v, want the unhealthy %s", f.released, members[0])
	}
	out := do(t, w, describeScalingInstances, core.Params{"ScalingGroupId": g}).(*esssdk.DescribeScalingInstancesResponse)
	if n := len(out.ScalingInstances.ScalingInstance); n != 2 || len(f.instances) != 2 {
		t.Fatalf("group holds %d instances (ECS %d), want 2: the unhealthy one replaced", n, len(f.instances))
	}
	for _, p := range []core.Params{{"InstanceId": "i-none", "HealthStatus": "Unhealthy"}, {"InstanceId": members[1], "HealthStatus": "Sick"}} {
		if _, e := w.Call(handle(setInstanceHealth), Version, p); e == nil {
			t.Errorf("SetInstanceHealth %v: accepted", p)
		}
	}
}
