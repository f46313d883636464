package cloud

import (
	"context"
	"net/netip"
	"slices"
	"testing"
)

// runTestNodes starts n ECS instances in the network's first vSwitch and waits until they run.
func runTestNodes(ctx context.Context, t *testing.T, c *Client, net testNetwork, sgID, token string, n int) []string {
	t.Helper()
	ids, err := c.RunInstances(ctx, RunInstancesInput{ClientToken: token, InstanceType: "ecs.g7.xlarge", ZoneID: testRegion + "-a",
		ImageID: "ubuntu_22_04_x64_20G_alibase_20240101.vhd", SecurityGroupID: sgID, VSwitchID: net.vswitches[0].ID,
		Amount: n, MinAmount: n, InstanceName: "cp", SystemDisk: Disk{Category: "cloud_essd", SizeGiB: 40}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitInstancesRunning(ctx, ids); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// backendIDs is the load balancer's backend server ids, sorted, failing the test on an error.
func backendIDs(ctx context.Context, t *testing.T, c *Client, lbID string) []string {
	t.Helper()
	lb, err := c.FindLoadBalancer(ctx, lbID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range lb.Backends {
		if b.Weight != 100 {
			t.Errorf("backend %s has weight %d, want 100", b.ServerID, b.Weight)
		}
		out = append(out, b.ServerID)
	}
	return out
}

// An internal load balancer in front of a control plane: listener 6443 started, three
// backends, then two, then more than one call takes, then deletion with nothing left.
func TestLoadBalancerLifecycle(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	sgID, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: net.vpcID, Name: "cp"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := runTestNodes(ctx, t, c, net, sgID, "cp-nodes", 25)
	tags := map[string]string{"gpucluster:cluster": "lb-test"}

	lbID, address, err := c.CreateInternalLoadBalancer(ctx, LoadBalancerInput{VSwitchID: net.vswitches[0].ID, Name: "lb-test-api",
		Tags: tags, ClientToken: ClientToken(0, "lb", net.vpcID)})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := c.FindLoadBalancer(ctx, lbID)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := netip.ParseAddr(address)
	if err != nil || !netip.MustParsePrefix(net.vswitches[0].CIDRBlock).Contains(addr) || lb.Address != address {
		t.Errorf("load balancer address %q (FindLoadBalancer %q) is not in vSwitch %s", address, lb.Address, net.vswitches[0].CIDRBlock)
	}
	if lb.AddressType != "intranet" || lb.VPCID != net.vpcID || lb.VSwitchID != net.vswitches[0].ID || lb.Spec != DefaultLoadBalancerSpec || lb.Name != "lb-test-api" {
		t.Errorf("FindLoadBalancer = %+v", lb)
	}
	assertTags(t, "load balancer", lb.Tags, tags)
	found, err := c.FindLoadBalancersByTags(ctx, tags)
	if err != nil || len(found) != 1 || found[0].ID != lbID || found[0].Address != address {
		t.Errorf("FindLoadBalancersByTags = %+v, %v; want %s", found, err, lbID)
	}

	hc := HealthCheck{HealthyThreshold: 2, UnhealthyThreshold: 3, TimeoutSeconds: 5, IntervalSeconds: 2}
	l, err := c.EnsureTCPListener(ctx, lbID, TCPListenerInput{Port: 6443, BackendPort: 6443, HealthCheck: hc})
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != ListenerStatusRunning || l.Port != 6443 || l.BackendPort != 6443 || l.HealthCheck.HealthyThreshold != 2 ||
		l.HealthCheck.UnhealthyThreshold != 3 || l.HealthCheck.TimeoutSeconds != 5 || l.HealthCheck.IntervalSeconds != 2 {
		t.Errorf("listener after EnsureTCPListener = %+v", l)
	}
	// Ensuring again changes only what differs, and keeps the listener running.
	hc.UnhealthyThreshold, hc.IntervalSeconds = 4, 7
	if l, err = c.EnsureTCPListener(ctx, lbID, TCPListenerInput{Port: 6443, BackendPort: 6443, HealthCheck: hc}); err != nil {
		t.Fatal(err)
	}
	if l.Status != ListenerStatusRunning || l.HealthCheck.UnhealthyThreshold != 4 || l.HealthCheck.IntervalSeconds != 7 {
		t.Errorf("listener after a second EnsureTCPListener = %+v; want running with UnhealthyThreshold 4, interval 7", l)
	}
	if _, err := c.EnsureTCPListener(ctx, lbID, TCPListenerInput{Port: 6443, BackendPort: 8443}); err == nil {
		t.Error("EnsureTCPListener with another backend port succeeded; the port is fixed at creation and must be refused")
	}
	if lb, _ = c.FindLoadBalancer(ctx, lbID); lb == nil || !slices.Equal(lb.ListenerPorts, []int{6443}) {
		t.Errorf("listener ports = %+v, want [6443]", lb)
	}

	want := func(ids ...string) []BackendServer {
		out := make([]BackendServer, 0, len(ids))
		for _, id := range ids {
			out = append(out, BackendServer{ServerID: id})
		}
		return out
	}
	for _, step := range []struct {
		name string
		ids  []string
	}{
		{"three control-plane nodes", nodes[:3]},
		{"scaled to two", nodes[1:3]},
		// More than MaxBackendServersPerCall: the emulator refuses a call with more than 20.
		{"more than one call takes", nodes},
		{"back to three", nodes[:3]},
	} {
		if err := c.SetBackendServers(ctx, lbID, want(step.ids...)); err != nil {
			t.Fatalf("%s: SetBackendServers: %v", step.name, err)
		}
		if got := backendIDs(ctx, t, c, lbID); !slices.Equal(got, step.ids) {
			t.Errorf("%s: backends = %v, want %v", step.name, got, step.ids)
		}
	}

	health, err := c.BackendHealth(ctx, lbID, 6443)
	if err != nil {
		t.Fatal(err)
	}
	if len(health) != 3 || health[nodes[0]] != BackendHealthNormal || health[nodes[2]] != BackendHealthNormal {
		t.Errorf("BackendHealth = %v; want the three running backends normal", health)
	}

	moved := map[string]string{"gpucluster:cluster": "lb-test", "role": "control-plane"}
	if err := c.SyncTags(ctx, KindLoadBalancer, []string{lbID}, tags, moved); err != nil {
		t.Fatal(err)
	}
	if lb, _ = c.FindLoadBalancer(ctx, lbID); lb != nil {
		assertTags(t, "load balancer after SyncTags", lb.Tags, moved)
	}
	if err := c.RenameLoadBalancer(ctx, lbID, "lb-test-api-2"); err != nil {
		t.Fatal(err)
	}

	if err := c.DeleteLoadBalancer(ctx, lbID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FindLoadBalancer(ctx, lbID); !IsNotFound(err) {
		t.Errorf("FindLoadBalancer after delete = %v, want not found", err)
	}
	if err := c.DeleteLoadBalancer(ctx, lbID); err != nil {
		t.Errorf("deleting a deleted load balancer = %v, want nil", err)
	}
	if err := c.DeleteInstances(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitInstancesGone(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSecurityGroup(ctx, sgID); err != nil {
		t.Fatal(err)
	}
	net.delete(ctx, t, c)
	assertNothingLeft(t, srv)
}
