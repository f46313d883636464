package ess

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/producttest"
)

// fakeECS stands in for ECS in this package's tests (ECS is not linked here): it launches
// Running instances of the one type it sells until its stock runs out, and keeps one security
// group in the world's VPC.
type fakeECS struct {
	w         *producttest.World
	instances map[string]core.Instance
	stock     int
	released  []string
}

func useFakeECS(t *testing.T, w *producttest.World, stock int) *fakeECS {
	f := &fakeECS{w: w, instances: map[string]core.Instance{}, stock: stock}
	before := core.ECS()
	t.Cleanup(func() { core.UseCompute(before) })
	core.UseCompute(core.Compute{
		Instance: func(_ *core.Call, id string) (core.Instance, bool) { in, ok := f.instances[id]; return in, ok },
		Run: func(c *core.Call, p core.Params) ([]string, *core.Error) {
			n, e := p.Int("Amount", 1)
			if e != nil {
				return nil, e
			}
			if n = min(n, f.stock); n == 0 {
				return nil, core.Errf(403, "OperationDenied.NoStock", "out of stock")
			}
			var ids []string
			for range n {
				id := c.Env.NewID("i")
				f.instances[id] = core.Instance{ID: id, Region: c.Region, Type: p["InstanceType"], Spot: p["SpotStrategy"], Status: "Running"}
				ids = append(ids, id)
			}
			f.stock -= n
			return ids, nil
		},
		Release: func(_ *core.Call, id string) {
			delete(f.instances, id)
			f.released = append(f.released, id)
		},
		SecurityGroup: func(_ *core.Call, id string) (core.SecurityGroup, bool) {
			return core.SecurityGroup{Region: producttest.Region, VpcID: w.VpcID}, id == "sg-1"
		},
		CheckLaunch: func(_ *core.Call, launch core.Params) *core.Error {
			if launch["ImageId"] == "" {
				return core.ErrMissing("ImageId")
			}
			return nil
		},
		InstanceType: func(t string) (string, bool) {
			n := "ecs." + strings.TrimPrefix(t, "ecs.")
			return n, n == "ecs.gn7i-c8g1.2xlarge"
		},
		CapacityRefusal: func(code string) bool { return code == "OperationDenied.NoStock" },
	})
	return f
}

func do(t *testing.T, w *producttest.World, fn func(*call) (any, *core.Error), p core.Params) any {
	t.Helper()
	out, e := w.Call(handle(fn), Version, p)
	if e != nil {
		t.Fatalf("%v", e)
	}
	return out
}

// enabledGroup creates a group of min..max over the world's vSwitch with a configuration, and
// enables it.
func enabledGroup(t *testing.T, w *producttest.World, minSize, maxSize int) string {
	t.Helper()
	g := do(t, w, createScalingGroup, core.Params{"MinSize": fmt.Sprint(minSize), "MaxSize": fmt.Sprint(maxSize),
		"VSwitchIds.1": w.VswID}).(*esssdk.CreateScalingGroupResponse).ScalingGroupId
	do(t, w, createScalingConfiguration, core.Params{"ScalingGroupId": g, "InstanceTypes.1": "gn7i-c8g1.2xlarge",
		"ImageId": "img", "SecurityGroupId": "sg-1"})
	do(t, w, enableScalingGroup, core.Params{"ScalingGroupId": g})
	return g
}

// Enabling a group below its minimum launches the missing instances through ECS; deleting it
// with ForceDelete releases them through ECS.
func TestGroupLaunchesAndReleasesThroughECS(t *testing.T) {
	w := producttest.NewWorld()
	f := useFakeECS(t, w, 10)
	g := enabledGroup(t, w, 2, 5)
	if len(f.instances) != 2 {
		t.Fatalf("enabled at MinSize 2: ECS holds %d instances", len(f.instances))
	}
	out := do(t, w, describeScalingGroups, core.Params{"ScalingGroupId": g}).(*esssdk.DescribeScalingGroupsResponse)
	if got := out.ScalingGroups.ScalingGroup[0]; got.TotalCapacity != 2 || got.ActiveCapacity != 2 || got.LifecycleState != "Active" {
		t.Fatalf("group after enabling: total %d, active %d, %s", got.TotalCapacity, got.ActiveCapacity, got.LifecycleState)
	}
	if _, e := w.Call(handle(deleteScalingGroup), Version, core.Params{"ScalingGroupId": g}); e == nil || e.Code != "InstancesExistInScalingGroup" {
		t.Fatalf("DeleteScalingGroup of a group with instances: %v", e)
	}
	do(t, w, deleteScalingGroup, core.Params{"ScalingGroupId": g, "ForceDelete": "true"})
	if len(f.instances) != 0 || len(f.released) != 2 {
		t.Fatalf("ForceDelete left %d instances, released %v", len(f.instances), f.released)
	}
}

// An activity that runs out of stock part way ends with what it got and the stock-out code.
func TestActivityStopsAtTheStockOut(t *testing.T) {
	w := producttest.NewWorld()
	useFakeECS(t, w, 3)
	g := enabledGroup(t, w, 0, 10)
	out := do(t, w, scaleWithAdjustment, core.Params{"ScalingGroupId": g, "AdjustmentType": "TotalCapacity", "AdjustmentValue": "5"})
	a := StoreIn(w.Stores).Activities[out.(*esssdk.ScaleWithAdjustmentResponse).ScalingActivityId]
	if len(a.Created) != 3 || a.ErrCode != "OperationDenied.NoStock" {
		t.Fatalf("activity created %v, error %q", a.Created, a.ErrCode)
	}
}

// The store writes its records under the key "ess", the one the state file had before ESS had
// its own package, and reads them back from it.
func TestStoreKeepsItsStateFileKey(t *testing.T) {
	st := &Store{}
	st.Init()
	st.SpotCapacity["z"] = map[string]int{"ecs.t": 1}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ess":{"groups":{},"configs":{},"rules":{},"activities":{},"spot_capacity":{"z":{"ecs.t":1}}}}`
	if string(raw) != want {
		t.Fatalf("store encodes as %s, want %s", raw, want)
	}
	back := &Store{}
	if err := json.Unmarshal([]byte(`{"vpcs":{},`+want[1:]), back); err != nil {
		t.Fatal(err)
	}
	if back.SpotCapacity["z"]["ecs.t"] != 1 {
		t.Fatalf("spot stock not read back: %v", back.SpotCapacity)
	}
}

func TestAdjustedTargetClamps(t *testing.T) {
	g := &scalingGroup{Min: 1, Max: 3000}
	for _, tc := range []struct {
		total       int
		typ         string
		value, minA int
		want        int
	}{
		{2, "QuantityChangeInCapacity", 3, 0, 5},
		{2, "QuantityChangeInCapacity", -5, 0, 1},         // MinSize
		{10, "PercentChangeInCapacity", 5, 2, 12},         // MinAdjustmentMagnitude lifts 0.5 to 2
		{0, "TotalCapacity", 2000, 0, 1000},               // one step moves at most 1000
		{2500, "TotalCapacity", 0, 0, 1500},               // ... down as well
		{4, "PercentChangeInCapacity", -100, 0, g.Min},    // never below MinSize
		{2990, "QuantityChangeInCapacity", 100, 0, g.Max}, // nor above MaxSize
	} {
		if got := adjustedTarget(g, tc.total, tc.typ, tc.value, tc.minA); got != tc.want {
			t.Errorf("%d %s %d (min %d): %d, want %d", tc.total, tc.typ, tc.value, tc.minA, got, tc.want)
		}
	}
}
