package network

import (
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
)

// An apply interrupted after the NAT gateway, or after the EIP, is picked up by the next one:
// it adopts what exists (by tags) instead of making a second gateway or address, and builds the
// rest. Removing twice is harmless and leaves nothing.
func TestEgressAdoptsAfterInterruptedApply(t *testing.T) {
	ctx := cloudtest.Context(t)
	tc := cloudtest.Start(t, 3)
	c, srv := tc.Client, tc.Emulator
	n := tc.CreateNetwork(ctx, t, cloudtest.Region+"-a", cloudtest.Region+"-b")
	vpcID, vswitches := n.VPCID, n.VSwitches
	spec := EgressSpec{NetworkID: "sg-adopt", Name: "adopt", VPCID: vpcID, ChargeType: cloud.EIPChargeByBandwidth, BandwidthMbps: 100}
	tags := EgressTags(spec.Name, spec.NetworkID, nil)

	// The first apply stopped after the NAT gateway and the EIP, before binding and SNAT.
	nat, err := ensureNATGateway(ctx, c, spec, vswitches[0].ID, tags)
	if err != nil {
		t.Fatal(err)
	}
	eip, err := ensureEIP(ctx, c, spec, tags)
	if err != nil {
		t.Fatal(err)
	}
	// The next apply, twice over (the second finds everything in place), with a new bandwidth.
	spec.BandwidthMbps = 150
	for i := 0; i < 2; i++ {
		if step, err := EnsureEgress(ctx, c, spec, vswitches); err != nil {
			t.Fatalf("EnsureEgress #%d: %s: %v", i+1, step, err)
		}
	}
	res := srv.Resources()
	if len(res.NatGateways) != 1 || res.NatGateways[0]["id"] != nat.ID || len(res.EIPs) != 1 || res.EIPs[0]["id"] != eip.ID {
		t.Fatalf("after adoption: NAT gateways %v, EIPs %v; want only %s and %s", res.NatGateways, res.EIPs, nat.ID, eip.ID)
	}
	if res.EIPs[0]["instance_id"] != nat.ID || res.EIPs[0]["bandwidth"] != 150 {
		t.Errorf("EIP %v: want bound to %s at 150 Mbit/s", res.EIPs[0], nat.ID)
	}
	if len(res.SnatEntries) != len(vswitches) {
		t.Errorf("SNAT entries %v; want one per vSwitch (%d)", res.SnatEntries, len(vswitches))
	}
	st, err := ReadEgress(ctx, c, spec.NetworkID, vpcID, vswitches)
	if err != nil || st.NATGatewayID != nat.ID || st.EIPID != eip.ID || len(st.SnatEntries) != len(vswitches) {
		t.Errorf("ReadEgress = %+v, %v", st, err)
	}

	// An entry deleted outside Terraform is listed as Deleting for a while: it is no longer part
	// of the egress, and the next apply waits it out and puts a new one in its place.
	gone := st.SnatEntries[vswitches[0].ID]
	del := vpc.CreateDeleteSnatEntryRequest()
	del.RegionId, del.SnatTableId, del.SnatEntryId = c.Region(), nat.SnatTableID, gone
	if err := c.Call(ctx, del, vpc.CreateDeleteSnatEntryResponse()); err != nil {
		t.Fatal(err)
	}
	if st, err := ReadEgress(ctx, c, spec.NetworkID, vpcID, vswitches); err != nil || st.SnatEntries[vswitches[0].ID] != "" {
		t.Errorf("ReadEgress after deleting %s = %+v, %v; want no entry for %s", gone, st, err, vswitches[0].ID)
	}
	if step, err := EnsureEgress(ctx, c, spec, vswitches); err != nil {
		t.Fatalf("EnsureEgress after an out-of-band delete: %s: %v", step, err)
	}
	if st, err := ReadEgress(ctx, c, spec.NetworkID, vpcID, vswitches); err != nil || len(st.SnatEntries) != len(vswitches) || st.SnatEntries[vswitches[0].ID] == gone {
		t.Errorf("ReadEgress after the repair = %+v, %v; want a new entry for %s", st, err, vswitches[0].ID)
	}

	for i := 0; i < 2; i++ {
		if step, err := RemoveEgress(ctx, c, spec.NetworkID, vpcID, EgressState{NATGatewayID: nat.ID, EIPID: eip.ID}); err != nil {
			t.Fatalf("RemoveEgress #%d: %s: %v", i+1, step, err)
		}
	}
	if res := srv.Resources(); len(res.NatGateways)+len(res.EIPs)+len(res.SnatEntries) != 0 {
		t.Errorf("left after RemoveEgress: %v %v %v", res.NatGateways, res.EIPs, res.SnatEntries)
	}
}
