package slb

import (
	"testing"

	slbsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/slb"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/producttest"
)

// useInstances shows SLB these ECS instances, as ECS would through the core; ECS is not linked
// in this test binary, so nothing else registers one.
func useInstances(t *testing.T, instances map[string]core.Instance) {
	before := core.ECS()
	t.Cleanup(func() { core.UseCompute(before) })
	compute := before
	compute.Instance = func(_ *core.Call, id string) (core.Instance, bool) {
		in, ok := instances[id]
		return in, ok
	}
	core.UseCompute(compute)
}

func createLB(t *testing.T, w *producttest.World) string {
	t.Helper()
	out, e := w.Call(createLoadBalancer, Version, core.Params{"AddressType": "intranet", "VSwitchId": w.VswID, "LoadBalancerSpec": "slb.s2.small"})
	if e != nil {
		t.Fatal(e)
	}
	return out.(*slbsdk.CreateLoadBalancerResponse).LoadBalancerId
}

// Backends are running instances of the load balancer's VPC; a released instance leaves the
// backend list, and a load balancer holds its vSwitch and VPC against deletion.
func TestBackendsAreRunningInstancesOfItsVPC(t *testing.T) {
	w := producttest.NewWorld()
	useInstances(t, map[string]core.Instance{
		"i-running": {Region: producttest.Region, VpcID: w.VpcID, IP: "10.0.1.5", Status: "Running"},
		"i-stopped": {Region: producttest.Region, VpcID: w.VpcID, IP: "10.0.1.6", Status: "Stopped"},
		"i-away":    {Region: producttest.Region, VpcID: "vpc-other", IP: "10.9.0.5", Status: "Running"},
	})
	lb := createLB(t, w)
	add := func(id string) *core.Error {
		_, e := w.Call(addBackendServers, Version, core.Params{"LoadBalancerId": lb, "BackendServers": `[{"ServerId":"` + id + `"}]`})
		return e
	}
	for id, code := range map[string]string{"i-none": "InvalidServerId.NotFound", "i-stopped": "ObtainIpFail", "i-away": "NetworkConflict"} {
		if e := add(id); e == nil || e.Code != code {
			t.Errorf("AddBackendServers %s: %v, want %s", id, e, code)
		}
	}
	if e := add("i-running"); e != nil {
		t.Fatal(e)
	}
	st := StoreIn(w.Stores)
	if got := st.LoadBalancers[lb].Backends; len(got) != 1 || got[0].ServerID != "i-running" {
		t.Fatalf("backends %+v", got)
	}
	if e := st.VSwitchDependency(w.VswID); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteVSwitch under a load balancer: %v", e)
	}
	if e := st.VpcDependency(w.VpcID); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteVpc under a load balancer: %v", e)
	}
	st.ForgetInstance("i-running")
	if got := st.LoadBalancers[lb].Backends; len(got) != 0 {
		t.Fatalf("a released instance stayed a backend: %+v", got)
	}
}
