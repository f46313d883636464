package cloud

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// The full egress of a network against the emulator: a NAT gateway, an EIP bound to it, one
// SNAT entry per vSwitch; then deletion in dependency order, with nothing left.
func TestEgressLifecycle(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24", "10.0.2.0/24")
	tags := map[string]string{"gpucluster:network": "net-test"}

	natID, tableID, err := c.CreateNATGateway(ctx, NATGatewayInput{VPCID: net.vpcID, VSwitchID: net.vswitches[0].ID,
		Name: "net-test-nat", Tags: tags, ClientToken: ClientToken(0, "nat", net.vpcID)})
	if err != nil {
		t.Fatal(err)
	}
	if tableID == "" {
		t.Fatal("CreateNATGateway returned no SNAT table id")
	}
	nat, err := c.WaitNATGatewayAvailable(ctx, natID)
	if err != nil {
		t.Fatal(err)
	}
	if nat.SnatTableID != tableID || nat.VPCID != net.vpcID || nat.VSwitchID != net.vswitches[0].ID || nat.Name != "net-test-nat" {
		t.Errorf("FindNATGateway = %+v; want table %s in VPC %s, vSwitch %s", nat, tableID, net.vpcID, net.vswitches[0].ID)
	}
	assertTags(t, "NAT gateway", nat.Tags, tags)

	eipID, address, err := c.AllocateEIP(ctx, EIPInput{BandwidthMbps: 200, InternetChargeType: EIPChargeByBandwidth,
		Name: "net-test-eip", Tags: tags, ClientToken: ClientToken(0, "eip", net.vpcID)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AssociateEIP(ctx, eipID, natID, EIPInstanceNAT); err != nil {
		t.Fatal(err)
	}
	// Binding again to the same gateway is a no-op, not an error.
	if err := c.AssociateEIP(ctx, eipID, natID, EIPInstanceNAT); err != nil {
		t.Errorf("AssociateEIP a second time: %v", err)
	}
	eip, err := c.FindEIP(ctx, eipID)
	if err != nil {
		t.Fatal(err)
	}
	if eip.Status != EIPStatusInUse || eip.InstanceID != natID || eip.InstanceType != EIPInstanceNAT || eip.Address != address || eip.BandwidthMbps != 200 {
		t.Errorf("FindEIP = %+v; want InUse on %s at %s, 200 Mbit/s", eip, natID, address)
	}
	assertTags(t, "EIP", eip.Tags, tags)

	var entryIDs []string
	for _, sw := range net.vswitches {
		id, err := c.CreateSNATEntry(ctx, SNATEntryInput{SnatTableID: tableID, SourceVSwitchID: sw.ID, SnatIPs: []string{address},
			Name: "snat-" + sw.Name, ClientToken: ClientToken(0, "snat", tableID, sw.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitSNATEntryAvailable(ctx, tableID, id); err != nil {
			t.Fatal(err)
		}
		entryIDs = append(entryIDs, id)
	}
	entries, err := c.FindSNATEntries(ctx, tableID)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(net.vswitches) {
		t.Fatalf("FindSNATEntries = %+v; want one per vSwitch", entries)
	}
	for _, e := range entries {
		i := slices.IndexFunc(net.vswitches, func(sw VSwitch) bool { return sw.ID == e.SourceVSwitchID })
		if i < 0 || e.SourceCIDR != net.vswitches[i].CIDRBlock || !slices.Equal(e.SnatIPs, []string{address}) ||
			e.NATGatewayID != natID || e.Status != SNATEntryStatusAvailable {
			t.Errorf("SNAT entry %+v does not translate a vSwitch of the network to %s", e, address)
		}
	}
	nat, err = c.FindNATGateway(ctx, natID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nat.EIPs, []string{eipID}) {
		t.Errorf("NAT gateway EIPs = %v, want [%s]", nat.EIPs, eipID)
	}

	// Adoption finders see what an interrupted apply would have left.
	gws, err := c.FindNATGateways(ctx, net.vpcID, tags)
	if err != nil || len(gws) != 1 || gws[0].ID != natID {
		t.Errorf("FindNATGateways = %+v, %v; want %s", gws, err, natID)
	}
	if gws, _ := c.FindNATGateways(ctx, net.vpcID, map[string]string{"gpucluster:network": "other"}); len(gws) != 0 {
		t.Errorf("FindNATGateways with another tag value = %+v, want none", gws)
	}
	eips, err := c.FindEIPsByTags(ctx, tags)
	if err != nil || len(eips) != 1 || eips[0].ID != eipID {
		t.Errorf("FindEIPsByTags = %+v, %v; want %s", eips, err, eipID)
	}

	// Tags move through SyncTags like every other kind's.
	moved := map[string]string{"gpucluster:network": "net-test", "team": "research"}
	for _, k := range []ResourceKind{KindNATGateway, KindEIP} {
		id := map[ResourceKind]string{KindNATGateway: natID, KindEIP: eipID}[k]
		if err := c.SyncTags(ctx, k, []string{id}, tags, moved); err != nil {
			t.Fatalf("SyncTags %s: %v", k.noun, err)
		}
	}
	if nat, _ = c.FindNATGateway(ctx, natID); nat != nil {
		assertTags(t, "NAT gateway after SyncTags", nat.Tags, moved)
	}
	if eip, _ = c.FindEIP(ctx, eipID); eip != nil {
		assertTags(t, "EIP after SyncTags", eip.Tags, moved)
	}

	if err := c.SetEIPBandwidth(ctx, eipID, 150); err != nil {
		t.Fatal(err)
	}
	if eip, _ = c.FindEIP(ctx, eipID); eip == nil || eip.BandwidthMbps != 150 {
		t.Errorf("bandwidth after SetEIPBandwidth(150) = %+v", eip)
	}
	if err := c.SetEIPBandwidth(ctx, eipID, 501); err == nil || !strings.Contains(err.Error(), "1-500") {
		t.Errorf("SetEIPBandwidth(501) = %v; want the 1-500 Mbit/s range named", err)
	}

	// The wrong order is refused and waited on: releasing the EIP while SNAT entries use it.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = c.ReleaseEIP(short, eipID)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "DependencyViolation.SnatEntry") {
		t.Errorf("ReleaseEIP with SNAT entries in place = %v; want it to wait on DependencyViolation.SnatEntry", err)
	}

	// The right order: SNAT entries, the EIP's binding, the gateway, the EIP, the network.
	for _, id := range entryIDs {
		if err := c.DeleteSNATEntry(ctx, tableID, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.UnassociateEIP(ctx, eipID); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteNATGateway(ctx, natID, false); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseEIP(ctx, eipID); err != nil {
		t.Fatal(err)
	}
	net.delete(ctx, t, c)
	assertNothingLeft(t, srv)
}

// DeleteNATGateway without force waits out dependents that someone else is deleting; with
// force the service drops SNAT entries and unbinds EIPs itself.
func TestDeleteNATGatewayDependents(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	egress := func(token string) (natID, tableID, eipID string) {
		natID, tableID, err := c.CreateNATGateway(ctx, NATGatewayInput{VPCID: net.vpcID, VSwitchID: net.vswitches[0].ID, ClientToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitNATGatewayAvailable(ctx, natID); err != nil {
			t.Fatal(err)
		}
		eipID, address, err := c.AllocateEIP(ctx, EIPInput{BandwidthMbps: 10, InternetChargeType: EIPChargeByTraffic, ClientToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AssociateEIP(ctx, eipID, natID, EIPInstanceNAT); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateSNATEntry(ctx, SNATEntryInput{SnatTableID: tableID, SourceVSwitchID: net.vswitches[0].ID, SnatIPs: []string{address}}); err != nil {
			t.Fatal(err)
		}
		return natID, tableID, eipID
	}

	natID, tableID, eipID := egress("first")
	done := make(chan error, 1)
	go func() { done <- c.DeleteNATGateway(ctx, natID, false) }()
	// Meanwhile the dependents go (what the provider's other resources do during a destroy).
	entries, err := c.FindSNATEntries(ctx, tableID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := c.DeleteSNATEntry(ctx, tableID, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.UnassociateEIP(ctx, eipID); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("DeleteNATGateway while dependents drain: %v", err)
	}
	if err := c.ReleaseEIP(ctx, eipID); err != nil {
		t.Fatal(err)
	}

	natID, tableID, eipID = egress("second")
	if err := c.DeleteNATGateway(ctx, natID, true); err != nil {
		t.Fatalf("DeleteNATGateway with force: %v", err)
	}
	if _, err := c.FindSNATEntries(ctx, tableID); !IsNotFound(err) {
		t.Errorf("SNAT table after a forced delete: %v, want not found", err)
	}
	if eip, err := c.FindEIP(ctx, eipID); err != nil || eip.InstanceID != "" {
		t.Errorf("EIP after a forced delete of its gateway = %+v, %v; want it kept and unbound", eip, err)
	}
	if err := c.ReleaseEIP(ctx, eipID); err != nil {
		t.Fatal(err)
	}
	net.delete(ctx, t, c)
	assertNothingLeft(t, srv)
}

func TestValidateEIPBandwidth(t *testing.T) {
	for _, tc := range []struct {
		charge  string
		mbps    int
		wantErr string
	}{
		{EIPChargeByBandwidth, 1, ""},
		{EIPChargeByBandwidth, 500, ""},
		{EIPChargeByBandwidth, 501, "1-500 Mbit/s"},
		{EIPChargeByBandwidth, 0, "1-500 Mbit/s"},
		{EIPChargeByTraffic, 200, ""},
		{EIPChargeByTraffic, 201, "1-200 Mbit/s"},
		{EIPChargeByTraffic, -5, "1-200 Mbit/s"},
		// 10 Gbit/s is beyond any single EIP: the answer points to a shared bandwidth plan.
		{EIPChargeByBandwidth, 10000, "Internet Shared Bandwidth"},
		{"PayBySpec", 10, `"PayBySpec" is not one of`},
	} {
		err := ValidateEIPBandwidth(tc.charge, tc.mbps)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ValidateEIPBandwidth(%s, %d) = %v, want nil", tc.charge, tc.mbps, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ValidateEIPBandwidth(%s, %d) = %v, want an error containing %q", tc.charge, tc.mbps, err, tc.wantErr)
		}
	}
}
