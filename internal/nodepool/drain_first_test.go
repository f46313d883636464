package nodepool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
)

// drainGuest answers the drain scripts sent to the emulator's instances with exit (and the
// script's "pods left" line for DrainExitPodsLeft), recording for each the StopInstances calls
// made before it; other scripts succeed.
type drainGuest struct {
	mu          sync.Mutex
	exit        int
	drained     []string // the NODE= of each drain script
	stopsBefore []int
}

// serveDrains starts a drainGuest answering exit until the test ends.
func serveDrains(ctx context.Context, t *testing.T, c *cloudtest.Cloud, exit int) *drainGuest {
	g := &drainGuest{exit: exit}
	gctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	g.serve(gctx, c)
	return g
}

func (g *drainGuest) serve(ctx context.Context, c *cloudtest.Cloud) {
	go func() {
		for ctx.Err() == nil {
			for _, p := range c.Emulator.PendingCommands() {
				code, out := 0, "done\n"
				if strings.Contains(p.Content, bootstrap.DrainScriptMarker) {
					node := strings.TrimPrefix(strings.Fields(p.Content[strings.Index(p.Content, "\nNODE="):])[0], "NODE=")
					g.mu.Lock()
					g.drained = append(g.drained, node)
					g.stopsBefore = append(g.stopsBefore, c.Calls("StopInstances"))
					code = g.exit
					g.mu.Unlock()
					out = fmt.Sprintf("node/%s cordoned\nnode %s drained\n", node, node)
					if code == bootstrap.DrainExitPodsLeft {
						out = fmt.Sprintf("node/%s cordoned\nnode %s: pods left after 180 rounds: default/steady-abc\n", node, node)
					}
				}
				c.Emulator.FinishCommand(p.InvokeID, p.InstanceID, code, out)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// TestRollDrainsEachNodeBeforeStoppingIt (issue #34): with a drain timeout, a roll runs the drain
// script on each node of a wave, naming the node, before the wave's stop. Pods a budget kept stop
// the apply before any node is stopped, the error naming them and drain_timeout; a drain that
// failed otherwise (here: the node's API did not answer) warns and the roll goes on.
func TestRollDrainsEachNodeBeforeStoppingIt(t *testing.T) {
	ctx, c, spec := startPool(t, 0, 2)
	spec.DrainTimeout = 15 * time.Minute
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatal(err)
	}
	before := poolNodes(ctx, t, c, spec.PoolID)
	g := serveDrains(ctx, t, c, bootstrap.DrainExitPodsLeft)

	next := spec
	next.SpecHash = "spec-v2"
	_, err := Reconcile(ctx, c.Client, next)
	if err == nil || !strings.Contains(err.Error(), "default/steady-abc") || !strings.Contains(err.Error(), "update_strategy.drain_timeout (15m0s)") ||
		!strings.Contains(err.Error(), "No node was stopped") {
		t.Fatalf("roll with a node a budget kept: %v, want an error naming the pod and drain_timeout", err)
	}
	if n := c.Calls("StopInstances") + c.Calls("DeleteInstances"); n != 0 {
		t.Fatalf("%d stop or delete calls after a drain a budget refused", n)
	}

	g.mu.Lock()
	g.exit, g.drained, g.stopsBefore = 0, nil, nil
	g.mu.Unlock()
	if _, err := Reconcile(ctx, c.Client, next); err != nil {
		t.Fatalf("roll: %v", err)
	}
	g.mu.Lock()
	var names []string
	for _, n := range before {
		names = append(names, strings.ToLower(n.HostName))
	}
	if !slices.Equal(g.drained, names) || !slices.Equal(g.stopsBefore, []int{0, 1}) {
		t.Errorf("drained %v with %v stops before each; want %v, each before its own wave's stop", g.drained, g.stopsBefore, names)
	}
	g.exit = bootstrap.DrainExitNoAPI
	g.mu.Unlock()

	again := next
	again.SpecHash = "spec-v3"
	out, err := Reconcile(ctx, c.Client, again)
	if err != nil {
		t.Fatalf("roll with drains that could not reach the API: %v", err)
	}
	if len(out.Warnings) != 2 || !strings.Contains(out.Warnings[0], "was not drained") || !strings.Contains(out.Warnings[0], "exit code 3") {
		t.Errorf("warnings %q: want one per node that was not drained", out.Warnings)
	}
}

// TestNoDrainWithoutATimeout: a pool without a drain timeout (no provider bootstrap, or "0s")
// sends no command before its stops.
func TestNoDrainWithoutATimeout(t *testing.T) {
	ctx, c, spec := startPool(t, 0, 1)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatal(err)
	}
	next := spec
	next.SpecHash = "spec-v2"
	if _, err := Reconcile(ctx, c.Client, next); err != nil {
		t.Fatal(err)
	}
	if n := c.Calls("RunCommand"); n != 0 {
		t.Errorf("%d RunCommand calls without a drain timeout", n)
	}
}

// TestScalingRollDrainsBeforeStandby: an autoscaled pool's roll drains each outdated node while it
// is still In Service; pods a budget kept stop the roll with no node put in Standby or stopped.
func TestScalingRollDrainsBeforeStandby(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 1, 2)
	spec.DrainTimeout = time.Minute
	first, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	g := serveDrains(ctx, t, c, bootstrap.DrainExitPodsLeft)
	next := spec
	next.SpecHash = "spec-v2"
	_, err = ApplyAutoscaling(ctx, c.Client, next)
	if err == nil || !strings.Contains(err.Error(), "default/steady-abc") {
		t.Fatalf("roll with a node a budget kept: %v, want the pods named", err)
	}
	if n := c.Calls("EnterStandby") + c.Calls("StopInstances"); n != 0 {
		t.Fatalf("%d standby or stop calls after a drain a budget refused", n)
	}
	g.mu.Lock()
	drained := slices.Clone(g.drained)
	g.mu.Unlock()
	host, err := c.Client.DescribeInstancesByID(ctx, InstanceIDs(first.Nodes))
	if err != nil || len(host) != 1 || !slices.Equal(drained, []string{strings.ToLower(host[0].HostName)}) {
		t.Errorf("drained %v, want the outdated node %+v (%v)", drained, host, err)
	}
}
