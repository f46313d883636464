package ecs

import (
	"encoding/json"
	"slices"
	"testing"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/producttest"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

const image = "ubuntu_22_04_x64_20G_alibase_20240101.vhd"

func do(t *testing.T, w *producttest.World, fn func(*call) (any, *core.Error), p core.Params) any {
	t.Helper()
	out, e := w.Call(handle(fn), Version, p)
	if e != nil {
		t.Fatalf("%v", e)
	}
	return out
}

// world is a producttest world with a security group in its VPC.
func world(t *testing.T) (*producttest.World, string) {
	w := producttest.NewWorld()
	sg := do(t, w, createSecurityGroup, core.Params{"VpcId": w.VpcID}).(*ecssdk.CreateSecurityGroupResponse).SecurityGroupId
	return w, sg
}

// RunInstances draws on the stock table set for a zone and a released instance gives it back;
// the release reaches the products above ECS (core.Released) and the VPC API's checks.
func TestStockGoesAndComesBackWithInstances(t *testing.T) {
	w, sg := world(t)
	const typ = "ecs.gn7i-c8g1.2xlarge"
	StoreIn(w.Stores).SetCapacity(StockTable(map[string]map[string]int{producttest.Region + "-a": {"gn7i-c8g1.2xlarge": 3}}))
	run := func(amount, minAmount string) (any, *core.Error) {
		return w.Call(handle(runInstances), Version, core.Params{"ImageId": image, "InstanceType": typ, "VSwitchId": w.VswID,
			"SecurityGroupId": sg, "Amount": amount, "MinAmount": minAmount})
	}
	if _, e := run("4", "4"); e == nil || e.Code != "OperationDenied.NoStock" {
		t.Fatalf("4 of a stock of 3: %v", e)
	}
	out, e := run("4", "1")
	if e != nil {
		t.Fatal(e)
	}
	ids := out.(*ecssdk.RunInstancesResponse).InstanceIdSets.InstanceIdSet
	if len(ids) != 3 || StoreIn(w.Stores).Capacity[producttest.Region+"-a"][typ] != 0 {
		t.Fatalf("launched %v, stock left %v", ids, StoreIn(w.Stores).Capacity)
	}
	if e := emuvpc.VSwitchDependency(&core.Call{Stores: w.Stores}, w.VswID); e == nil {
		t.Fatal("DeleteVSwitch would take the instances' vSwitch")
	}
	var released []string
	core.WhenReleased(func(_ *core.Stores, id string) { released = append(released, id) })
	do(t, w, deleteInstances, core.Params{"InstanceId.1": ids[0], "Force": "true"})
	if !slices.Contains(released, ids[0]) || StoreIn(w.Stores).Capacity[producttest.Region+"-a"][typ] != 1 {
		t.Fatalf("after releasing %s: hooks saw %v, stock %v", ids[0], released, StoreIn(w.Stores).Capacity)
	}
}

// The store writes the keys the state file had before ECS had its own package, and its indexes
// are rebuilt when it is read back.
func TestStoreKeepsItsStateFileKeys(t *testing.T) {
	w, sg := world(t)
	do(t, w, runInstances, core.Params{"ImageId": image, "InstanceType": "ecs.gn7i-c8g1.2xlarge", "VSwitchId": w.VswID,
		"SecurityGroupId": sg, "Tag.1.Key": "pool", "Tag.1.Value": "a"})
	raw, err := json.Marshal(StoreIn(w.Stores))
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"instances", "security_groups", "deployment_sets", "hpc_clusters", "capacity"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("the store lacks the state file key %q: %s", k, raw)
		}
	}
	back := &Store{}
	if err := json.Unmarshal(raw, back); err != nil {
		t.Fatal(err)
	}
	back.Init()
	if len(back.order) != 1 || len(back.byTag[tagKeyIndex("pool", "a")]) != 1 || back.refs[sg] != 1 {
		t.Fatalf("indexes not rebuilt: %d in order, %d tagged, %d refs of %s", len(back.order), len(back.byTag[tagKeyIndex("pool", "a")]), back.refs[sg], sg)
	}
}
