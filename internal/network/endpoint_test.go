package network

import (
	"slices"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
)

// An endpoint's apply interrupted after the load balancer was made: the next one finds it by
// its tags and makes no second one. The traffic path then forwards 6443 and the endpoint's rules
// let each vSwitch in; revoking them leaves the network's own rules alone.
func TestEndpointAdoptsItsLoadBalancerAndOwnsOnlyItsRules(t *testing.T) {
	ctx := cloudtest.Context(t)
	tc := cloudtest.Start(t, 3)
	c := tc.Client
	n := tc.CreateNetwork(ctx, t, cloudtest.Region+"-a", cloudtest.Region+"-b")
	var cidrs []string
	for _, sw := range n.VSwitches {
		cidrs = append(cidrs, sw.CIDRBlock)
	}
	// A rule of the network's own, which the endpoint must never touch.
	networkRule := netplan.Rule{Protocol: "TCP", PortRange: "22/22", Source: "10.9.0.0/16", Policy: "accept", Priority: 1, Description: "ssh"}
	if err := c.AuthorizeIngress(ctx, n.SecurityGroupID, []cloud.IngressRule{RuleToCloud(networkRule)}); err != nil {
		t.Fatalf("AuthorizeIngress: %v", err)
	}
	in := EndpointInput{Network: EndpointNetwork{ID: n.SecurityGroupID, VSwitchID: n.VSwitches[0].ID, CIDRs: cidrs}, Name: "api"}

	first, err := CreateOrAdoptLoadBalancer(ctx, c, in)
	if err != nil {
		t.Fatalf("first (interrupted) apply: %v", err)
	}
	again, err := CreateOrAdoptLoadBalancer(ctx, c, in)
	if err != nil || again != first {
		t.Fatalf("second apply answered %q, %v; want the first's %s", again, err, first)
	}
	if got := tc.Calls("CreateLoadBalancer"); got != 1 {
		t.Errorf("%d CreateLoadBalancer calls, want 1", got)
	}

	if err := EnsureEndpointTraffic(ctx, c, first, in.Network); err != nil {
		t.Fatalf("EnsureEndpointTraffic: %v", err)
	}
	status, sources, err := EndpointTraffic(ctx, c, first, n.SecurityGroupID)
	if err != nil {
		t.Fatalf("EndpointTraffic: %v", err)
	}
	wantSources := EndpointSources(netplan.EndpointRules(first, cidrs))
	if status == ListenerMissing || !slices.Equal(sources, wantSources) {
		t.Errorf("traffic = %q from %v, want a listener and sources %v", status, sources, wantSources)
	}

	if err := ReconcileEndpointRules(ctx, c, n.SecurityGroupID, first, nil); err != nil {
		t.Fatalf("revoking the endpoint's rules: %v", err)
	}
	perms, err := c.SecurityGroupIngress(ctx, n.SecurityGroupID)
	if err != nil {
		t.Fatalf("SecurityGroupIngress: %v", err)
	}
	if len(perms) != 1 || RuleFromCloud(perms[0]).Key() != networkRule.Key() {
		t.Errorf("rules left = %+v, want only the network's own %v", perms, networkRule)
	}
}
