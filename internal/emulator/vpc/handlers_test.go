package vpc_test

import (
	"testing"
	"time"

	vpcsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/producttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// call runs action as the dispatcher would, through the table the package's init filled: the
// test sees the routes the Server serves (write routes purge settled deletions first).
func call(t *testing.T, w *producttest.World, action string, p core.Params) (any, *core.Error) {
	t.Helper()
	r, ok := core.Lookup(vpc.Version + "/" + action)
	if !ok {
		t.Fatalf("%s is not registered", action)
	}
	return w.Call(r.Fn, vpc.Version, p)
}

// do runs action and fails the test on an error.
func do(t *testing.T, w *producttest.World, action string, p core.Params) any {
	t.Helper()
	out, e := call(t, w, action, p)
	if e != nil {
		t.Fatalf("%s: %v", action, e)
	}
	return out
}

// refused runs action and fails the test unless it answers code.
func refused(t *testing.T, w *producttest.World, action string, p core.Params, code string) {
	t.Helper()
	if _, e := call(t, w, action, p); e == nil || e.Code != code {
		t.Fatalf("%s: got %v, want %s", action, e, code)
	}
}

// A NAT gateway holds its VPC and vSwitch ahead of everything else (the vSwitch itself
// included); an SNAT entry and a bound EIP hold the gateway until Force; a forced delete
// settles and the next NAT or EIP write purges it, after which the network can go. Without ECS no
// instance exists to bind an EIP to.
func TestNatGatewayHoldsItsNetworkUntilItIsGone(t *testing.T) {
	w := producttest.NewWorld()
	settle := func() { w.Now = w.Now.Add(2 * time.Second) }

	nat := do(t, w, "CreateNatGateway", core.Params{"VpcId": w.VpcID, "VSwitchId": w.VswID}).(*vpcsdk.CreateNatGatewayResponse)
	refused(t, w, "DeleteVpc", core.Params{"VpcId": w.VpcID}, "DependencyViolation.NatGateway")
	refused(t, w, "DeleteVSwitch", core.Params{"VSwitchId": w.VswID}, "DependencyViolation.EnhancedNatgw")
	settle()

	eip := do(t, w, "AllocateEipAddress", core.Params{}).(*vpcsdk.AllocateEipAddressResponse)
	if want := vpc.PublicAddress(w.Env.Seq()); eip.EipAddress != want {
		t.Fatalf("EIP address %s, want %s (from the sequence value its id took)", eip.EipAddress, want)
	}
	refused(t, w, "AssociateEipAddress", core.Params{"AllocationId": eip.AllocationId, "InstanceId": "i-none"}, "InvalidInstanceId.NotFound")
	do(t, w, "AssociateEipAddress", core.Params{"AllocationId": eip.AllocationId, "InstanceId": nat.NatGatewayId, "InstanceType": vpc.EipTargetNat})
	settle()
	do(t, w, "CreateSnatEntry", core.Params{"SnatTableId": nat.SnatTableIds.SnatTableId[0], "SnatIp": eip.EipAddress, "SourceVSwitchId": w.VswID})
	settle()
	refused(t, w, "DeleteNatGateway", core.Params{"NatGatewayId": nat.NatGatewayId}, "DependencyViolation.SnatEntry")
	do(t, w, "DeleteNatGateway", core.Params{"NatGatewayId": nat.NatGatewayId, "Force": "true"})
	refused(t, w, "DeleteVpc", core.Params{"VpcId": w.VpcID}, "DependencyViolation.NatGateway") // still Deleting
	settle()

	// The vSwitch is the next holder of the VPC: DeleteVpc names it (vpc.RankVSwitches).
	refused(t, w, "DeleteVpc", core.Params{"VpcId": w.VpcID}, "DependencyViolation.VSwitch")
	if n := len(vpc.StoreIn(w.Stores).Nats); n != 1 {
		t.Fatalf("%d gateways before a NAT or EIP write, want the settled one still stored", n)
	}
	do(t, w, "ModifyEipAddressAttribute", core.Params{"AllocationId": eip.AllocationId, "Name": "unbound"})
	if n := len(vpc.StoreIn(w.Stores).Nats); n != 0 {
		t.Fatalf("%d gateways after a NAT or EIP write, want the settled one purged", n)
	}
	do(t, w, "DeleteVSwitch", core.Params{"VSwitchId": w.VswID})
	do(t, w, "DeleteVpc", core.Params{"VpcId": w.VpcID})
}
