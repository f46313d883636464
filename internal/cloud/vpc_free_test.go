package cloud

import (
	"testing"
)

// FindVSwitch and FindVSwitches carry DescribeVSwitches' AvailableIpAddressCount: a /28 hands out
// the emulator's 10, and three instances in it leave 7.
func TestVSwitchFreeAddresses(t *testing.T) {
	c, _ := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.3.0/28")
	id := net.vswitches[0].ID
	if got := net.vswitches[0].FreeAddresses; got != 10 {
		t.Fatalf("new /28: %d free addresses, want 10", got)
	}
	sgID, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: net.vpcID, Name: "free"})
	if err != nil {
		t.Fatal(err)
	}
	runTestNodes(ctx, t, c, net, sgID, "free-nodes", 3)
	sw, err := c.FindVSwitch(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.FindVSwitches(ctx, net.vpcID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sw.FreeAddresses != 7 || len(all) != 1 || all[0].FreeAddresses != 7 {
		t.Fatalf("after 3 instances: FindVSwitch %d free, FindVSwitches %+v; want 7", sw.FreeAddresses, all)
	}
}
