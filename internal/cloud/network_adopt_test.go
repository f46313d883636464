package cloud

import (
	"context"
	"errors"
	"testing"
)

// A create repeated with the same ClientToken (an apply interrupted after the service acted)
// answers with the object already made, and CreateOrAdopt moves past a token whose object has
// since been deleted.
func TestNetworkCreatesAreIdempotentByClientToken(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	sw := net.vswitches[0].ID

	twice := func(what string, create func() (string, error)) string {
		t.Helper()
		first, err := create()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		second, err := create()
		if err != nil {
			t.Fatalf("%s again with the same token: %v", what, err)
		}
		if first != second {
			t.Errorf("%s twice with one ClientToken made %s and %s, want one object", what, first, second)
		}
		return first
	}
	natToken := ClientToken(0, "nat", net.vpcID)
	natID := twice("CreateNATGateway", func() (string, error) {
		id, _, err := c.CreateNATGateway(ctx, NATGatewayInput{VPCID: net.vpcID, VSwitchID: sw, ClientToken: natToken})
		return id, err
	})
	nat, err := c.WaitNATGatewayAvailable(ctx, natID)
	if err != nil {
		t.Fatal(err)
	}
	eipToken := ClientToken(0, "eip", net.vpcID)
	var address string
	eipID := twice("AllocateEIP", func() (id string, err error) {
		id, address, err = c.AllocateEIP(ctx, EIPInput{BandwidthMbps: 100, InternetChargeType: EIPChargeByBandwidth, ClientToken: eipToken})
		return id, err
	})
	if err := c.AssociateEIP(ctx, eipID, natID, EIPInstanceNAT); err != nil {
		t.Fatal(err)
	}
	snatToken := ClientToken(0, "snat", sw)
	entryID := twice("CreateSNATEntry", func() (string, error) {
		return c.CreateSNATEntry(ctx, SNATEntryInput{SnatTableID: nat.SnatTableID, SourceVSwitchID: sw, SnatIPs: []string{address}, ClientToken: snatToken})
	})
	lbToken := ClientToken(0, "lb", net.vpcID)
	lbID := twice("CreateInternalLoadBalancer", func() (string, error) {
		id, _, err := c.CreateInternalLoadBalancer(ctx, LoadBalancerInput{VSwitchID: sw, ClientToken: lbToken})
		return id, err
	})
	if lbs, err := c.FindLoadBalancersByTags(ctx, nil); err != nil || len(lbs) != 1 {
		t.Errorf("load balancers after two creates with one token = %+v, %v; want one", lbs, err)
	}

	// CreateOrAdopt adopts the live object of generation 0, and skips it once it is deleted.
	adoptEIP := func() string {
		t.Helper()
		id, err := CreateOrAdopt("EIP", []string{"eip", net.vpcID}, func(token string) (string, error) {
			id, _, err := c.AllocateEIP(ctx, EIPInput{BandwidthMbps: 100, InternetChargeType: EIPChargeByBandwidth, ClientToken: token})
			return id, err
		}, func(id string) error { _, err := c.FindEIP(ctx, id); return err })
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if got := adoptEIP(); got != eipID {
		t.Errorf("CreateOrAdopt = %s, want the live EIP %s adopted", got, eipID)
	}

	if err := c.DeleteSNATEntry(ctx, nat.SnatTableID, entryID); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseEIP(ctx, eipID); err != nil {
		t.Fatal(err)
	}
	next := adoptEIP()
	if next == eipID {
		t.Errorf("CreateOrAdopt after the release answered the released EIP %s", eipID)
	}
	if err := c.ReleaseEIP(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteNATGateway(ctx, natID, false); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteLoadBalancer(ctx, lbID); err != nil {
		t.Fatal(err)
	}
	net.delete(ctx, t, c)
	assertNothingLeft(t, srv)
}

// Every finder answers a typed not-found (errors.Is ErrNotFound) for an object that does not
// exist, whether the service says so or lists nothing; and every delete of one is done.
func TestNetworkFindersTypedNotFound(t *testing.T) {
	c, _ := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	natID, tableID, err := c.CreateNATGateway(ctx, NATGatewayInput{VPCID: net.vpcID, VSwitchID: net.vswitches[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	lbID, _, err := c.CreateInternalLoadBalancer(ctx, LoadBalancerInput{VSwitchID: net.vswitches[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitNATGatewayAvailable(ctx, natID); err != nil {
		t.Fatal(err)
	}

	for name, find := range map[string]func() error{
		"FindNATGateway":                func() error { _, err := c.FindNATGateway(ctx, "ngw-missing"); return err },
		"FindEIP":                       func() error { _, err := c.FindEIP(ctx, "eip-missing"); return err },
		"FindSNATEntry (missing entry)": func() error { _, err := c.FindSNATEntry(ctx, tableID, "snat-missing"); return err },
		"FindSNATEntry (missing table)": func() error { _, err := c.FindSNATEntry(ctx, "stb-missing", "snat-missing"); return err },
		"FindSNATEntries":               func() error { _, err := c.FindSNATEntries(ctx, "stb-missing"); return err },
		"FindLoadBalancer":              func() error { _, err := c.FindLoadBalancer(ctx, "lb-missing"); return err },
		"FindTCPListener (missing LB)":  func() error { _, err := c.FindTCPListener(ctx, "lb-missing", 6443); return err },
		"FindTCPListener (no listener)": func() error { _, err := c.FindTCPListener(ctx, lbID, 6443); return err },
	} {
		err := find()
		if !errors.Is(err, ErrNotFound) || !IsNotFound(err) {
			t.Errorf("%s = %v, want an error matching ErrNotFound", name, err)
		}
	}
	for name, del := range map[string]func() error{
		"DeleteNATGateway":   func() error { return c.DeleteNATGateway(ctx, "ngw-missing", false) },
		"ReleaseEIP":         func() error { return c.ReleaseEIP(ctx, "eip-missing") },
		"UnassociateEIP":     func() error { return c.UnassociateEIP(ctx, "eip-missing") },
		"DeleteSNATEntry":    func() error { return c.DeleteSNATEntry(ctx, tableID, "snat-missing") },
		"DeleteLoadBalancer": func() error { return c.DeleteLoadBalancer(ctx, "lb-missing") },
		"DeleteTCPListener":  func() error { return c.DeleteTCPListener(ctx, lbID, 6443) },
	} {
		if err := del(); err != nil {
			t.Errorf("%s of a missing object = %v, want nil (already gone)", name, err)
		}
	}
	// A not-found load balancer is not mistaken for a missing listener to create.
	if _, err := c.EnsureTCPListener(ctx, "lb-missing", TCPListenerInput{Port: 6443, BackendPort: 6443}); !IsNotFound(err) {
		t.Errorf("EnsureTCPListener on a missing load balancer = %v, want not found", err)
	}
	if err := c.SetBackendServers(context.Background(), "lb-missing", nil); !IsNotFound(err) {
		t.Errorf("SetBackendServers on a missing load balancer = %v, want not found", err)
	}
}
