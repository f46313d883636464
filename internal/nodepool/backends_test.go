package nodepool

import (
	"slices"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// A control plane's roll keeps its load balancer's backends equal to the running nodes, and a
// server of another pool behind the same load balancer stays.
func TestControlPlaneRollKeepsTheBackendsEqualToItsNodes(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 2)
	lbID, _, err := c.Client.CreateInternalLoadBalancer(ctx, cloud.LoadBalancerInput{VSwitchID: spec.Network.VSwitchIDs[zoneA], Name: "api"})
	if err != nil {
		t.Fatalf("CreateInternalLoadBalancer: %v", err)
	}
	other := spec
	other.PoolID, other.Name, other.Size = NewPoolID(), "joining", 1
	otherOut, err := Grow(ctx, c.Client, other, "create", nil, 1)
	if err != nil {
		t.Fatalf("creating the other pool: %v", err)
	}
	if err := SyncBackends(ctx, c.Client, lbID, other.PoolID, otherOut.Running); err != nil {
		t.Fatalf("SyncBackends of the other pool: %v", err)
	}

	spec.LoadBalancerID = lbID
	out, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := SyncBackends(ctx, c.Client, lbID, spec.PoolID, out.Running); err != nil {
		t.Fatalf("SyncBackends: %v", err)
	}
	spec.SpecHash = "spec-v2"
	out, err = Reconcile(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	lb, err := c.Client.FindLoadBalancer(ctx, lbID)
	if err != nil {
		t.Fatalf("FindLoadBalancer: %v", err)
	}
	var got []string
	for _, b := range lb.Backends {
		got = append(got, b.ServerID)
	}
	want := append(slices.Clone(out.IDs), otherOut.IDs...)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("backends = %v, want the rolled nodes and the other pool's %v", got, want)
	}
	if BackendsMissing(ctx, c.Client, lbID, out.IDs) {
		t.Error("BackendsMissing reports a node missing after the roll")
	}
	if err := DetachBackends(ctx, c.Client, lbID, out.IDs[:1]); err != nil {
		t.Fatalf("DetachBackends: %v", err)
	}
	if !BackendsMissing(ctx, c.Client, lbID, out.IDs) {
		t.Error("BackendsMissing does not see a node taken out")
	}
}
