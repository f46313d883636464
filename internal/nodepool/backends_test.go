package nodepool

import (
	"errors"
	"slices"
	"sync"
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

// TestPoolsSharingALoadBalancerSyncAtOnce: a control plane's first and joining pools finish
// their applies at the same time and each syncs the shared load balancer; neither undoes the
// other's servers (a whole-list write computed before the other's add did: CI saw the joining
// pool's nodes missing). Rounds from an empty load balancer, both syncs at once each time.
func TestPoolsSharingALoadBalancerSyncAtOnce(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 1)
	lbID, _, err := c.Client.CreateInternalLoadBalancer(ctx, cloud.LoadBalancerInput{VSwitchID: spec.Network.VSwitchIDs[zoneA], Name: "api"})
	if err != nil {
		t.Fatal(err)
	}
	join := spec
	join.PoolID, join.Name, join.Size = NewPoolID(), "joining", 2
	first, err := Grow(ctx, c.Client, spec, "create", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	joined, err := Grow(ctx, c.Client, join, "create", nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(first.IDs), joined.IDs...)
	for round := range 15 {
		if err := DetachBackends(ctx, c.Client, lbID, all); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = SyncBackends(ctx, c.Client, lbID, spec.PoolID, first.Running) })
		wg.Go(func() { errs[1] = SyncBackends(ctx, c.Client, lbID, join.PoolID, joined.Running) })
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		lb, err := c.Client.FindLoadBalancer(ctx, lbID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range lb.Backends {
			got = append(got, b.ServerID)
		}
		if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(all))) {
			t.Fatalf("round %d: backend servers %v, want both pools' nodes %v", round, got, all)
		}
	}
}
