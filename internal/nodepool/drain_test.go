package nodepool

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
)

// guests plays the guests of ids as a node with graceful node shutdown does: each delays a
// normal shutdown (DelayGuestShutdown) and, once signalled, powers off. It answers the ids it
// saw signalled, when ctx ends.
func guests(ctx context.Context, t *testing.T, c *cloudtest.Cloud, ids []string) func() []string {
	t.Helper()
	for _, id := range ids {
		c.Emulator.DelayGuestShutdown(id, time.Hour)
	}
	var mu sync.Mutex
	var signalled []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for _, in := range c.Emulator.View().Instances {
				if in.ShutdownSignalled && slices.Contains(ids, in.ID) {
					mu.Lock()
					if !slices.Contains(signalled, in.ID) {
						signalled = append(signalled, in.ID)
					}
					mu.Unlock()
					c.Emulator.PowerOffFromGuest(in.ID)
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return func() []string {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return slices.Sorted(slices.Values(signalled))
	}
}

// TestShrinkStopsNodesBeforeDeleting: the nodes a shrink removes are stopped normally (their
// guests are asked to shut down, so the kubelet's graceful node shutdown terminates their pods)
// and deleted once Stopped, with no warning; nodes a force stop or a force delete took down
// would never have been signalled.
func TestShrinkStopsNodesBeforeDeleting(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 3)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatalf("create: %v", err)
	}
	nodes := poolNodes(ctx, t, c, spec.PoolID)
	gctx, stop := context.WithCancel(ctx)
	seen := guests(gctx, t, c, InstanceIDs(nodes))
	spec.Size = 1
	out, err := Reconcile(ctx, c.Client, spec)
	stop()
	if err != nil {
		t.Fatalf("shrink: %v", err)
	}
	if len(out.Warnings) > 0 {
		t.Errorf("warnings %q, want none: every node stopped in time", out.Warnings)
	}
	gone := slices.DeleteFunc(InstanceIDs(nodes), func(id string) bool { return slices.Contains(out.IDs, id) })
	if got := seen(); !slices.Equal(got, gone) || len(gone) != 2 {
		t.Fatalf("guests signalled to shut down: %v, want the 2 removed nodes %v", got, gone)
	}
	if left := poolNodes(ctx, t, c, spec.PoolID); len(left) != 1 {
		t.Errorf("%d nodes left, want 1", len(left))
	}
}

// TestStopThatTimesOutIsNamed: a node whose guest does not finish its shutdown in time is
// answered as late (RemoveNodes deletes it all the same and warns, naming it); one that stops is
// not.
func TestStopThatTimesOutIsNamed(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 2)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatalf("create: %v", err)
	}
	ids := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	c.Emulator.DelayGuestShutdown(ids[0], time.Hour) // a guest that never powers off by itself
	late, err := c.Client.StopInstancesGracefully(ctx, ids, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(late, ids[:1]) {
		t.Fatalf("late %v, want %v", late, ids[:1])
	}
	got, err := c.Client.DescribeInstancesByID(ctx, ids[1:])
	if err != nil || len(got) != 1 || got[0].Status != "Stopped" {
		t.Fatalf("the other node: %+v (%v), want Stopped", got, err)
	}
}

// reapplied is an autoscaled pool applied twice: first as created, then changed, with the first
// nodes' guests delaying their shutdown as graceful node shutdown does.
type reapplied struct {
	ctx       context.Context
	c         *cloudtest.Cloud
	spec      Spec            // as changed
	first     []string        // the first apply's nodes
	res       AutoscaleResult // the second apply's
	signalled []string        // the first nodes whose guests were asked to shut down, sorted
}

func reapplyAutoscaled(t *testing.T, minSize, maxSize int, change func(Spec) Spec) reapplied {
	t.Helper()
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, minSize, maxSize)
	first, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	r := reapplied{ctx: ctx, c: c, spec: change(spec), first: InstanceIDs(first.Nodes)}
	gctx, stop := context.WithCancel(ctx)
	seen := guests(gctx, t, c, r.first)
	r.res, err = ApplyAutoscaling(ctx, c.Client, r.spec)
	stop()
	if err != nil {
		t.Fatalf("the second apply: %v", err)
	}
	if len(r.res.Warnings) > 0 {
		t.Errorf("warnings %q, want none: every node stopped in time", r.res.Warnings)
	}
	r.signalled = seen()
	return r
}

// TestScalingRollStopsNodesBeforeRemoving: a roll of an autoscaled pool drains the nodes it
// replaces the way a fixed pool's shrink does: each outdated node is stopped normally (its guest
// is signalled, so the kubelet's graceful node shutdown terminates its pods) before the group
// removes it. The nodes stand by first, or the group's health check would take the stopped
// nodes out and launch replacements of its own: removing them would then fail.
func TestScalingRollStopsNodesBeforeRemoving(t *testing.T) {
	r := reapplyAutoscaled(t, 2, 3, func(s Spec) Spec { s.SpecHash = "spec-v2"; return s })
	if want := slices.Sorted(slices.Values(r.first)); !slices.Equal(r.signalled, want) {
		t.Fatalf("guests signalled to shut down: %v, want every replaced node %v", r.signalled, want)
	}
	if n := r.c.Calls("EnterStandby"); n != 2 {
		t.Errorf("%d EnterStandby calls, want 2 (one per wave of max_unavailable 1)", n)
	}
	for _, n := range poolNodes(r.ctx, t, r.c, r.spec.PoolID) {
		if slices.Contains(r.first, n.ID) {
			t.Errorf("replaced node %s is still there", n.ID)
		}
	}
	if len(r.res.Nodes) != 2 {
		t.Errorf("%d nodes after the roll, want the group's 2", len(r.res.Nodes))
	}
}

// TestLowerMaxSizeDrainsTheExcess: a max_size below the nodes the group holds removes the excess
// drained (stopped normally first), before Auto Scaling would remove them itself, unstopped;
// min_size comes down with it, so the removal is not refused.
func TestLowerMaxSizeDrainsTheExcess(t *testing.T) {
	r := reapplyAutoscaled(t, 3, 3, func(s Spec) Spec { return autoscaled(s, 1, 1) })
	left := InstanceIDs(r.res.Nodes)
	if len(left) != 1 || !slices.Contains(r.first, left[0]) {
		t.Fatalf("nodes after lowering max_size: %v, want one of %v", left, r.first)
	}
	removed := slices.DeleteFunc(slices.Clone(r.first), func(id string) bool { return id == left[0] })
	slices.Sort(removed)
	if !slices.Equal(r.signalled, removed) {
		t.Fatalf("guests signalled to shut down: %v, want the 2 removed nodes %v", r.signalled, removed)
	}
}

// TestScalingRollResumesAfterAnInterruptedDrain: an apply that stopped after putting a node in
// Standby (a crash, a cancelled apply) leaves it there; the next roll drains and removes it with
// the rest instead of failing on it, and nothing is left in Standby.
func TestScalingRollResumesAfterAnInterruptedDrain(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 2, 3)
	first, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	old := InstanceIDs(first.Nodes)
	if err := c.Client.EnterStandby(ctx, first.GroupID, old[:1]); err != nil {
		t.Fatalf("the interrupted apply's Standby: %v", err)
	}
	spec.SpecHash = "spec-v2"
	res, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("the next roll: %v", err)
	}
	for _, n := range poolNodes(ctx, t, c, spec.PoolID) {
		if slices.Contains(old, n.ID) {
			t.Errorf("node %s of the old configuration is still there", n.ID)
		}
	}
	inst, err := c.Client.ScalingInstances(ctx, res.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inst {
		if in.State == "Standby" {
			t.Errorf("instance %s left in Standby", in.InstanceID)
		}
	}
}

// TestDeleteScalingGroupDrainsFirst: destroying an autoscaled pool stops each node normally (its
// guest is signalled, so the kubelet's graceful node shutdown ends its pods) before the group and
// its instances go, min_size notwithstanding, and with no warning when every node stops in time.
func TestDeleteScalingGroupDrainsFirst(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 2, 3)
	res, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	nodes := InstanceIDs(res.Nodes)
	gctx, stop := context.WithCancel(ctx)
	seen := guests(gctx, t, c, nodes)
	warnings, err := DeleteScalingGroup(ctx, c.Client, res.PoolID, res.GroupID)
	stop()
	if err != nil {
		t.Fatalf("DeleteScalingGroup: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings %q, want none: every node stopped in time", warnings)
	}
	if got, want := seen(), slices.Sorted(slices.Values(nodes)); !slices.Equal(got, want) {
		t.Fatalf("guests signalled to shut down: %v, want every node of the group %v", got, want)
	}
	if left := poolNodes(ctx, t, c, res.PoolID); len(left) != 0 {
		t.Errorf("%d nodes left after the delete", len(left))
	}
}
