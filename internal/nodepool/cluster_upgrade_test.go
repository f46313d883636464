package nodepool

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
)

// guest answers the Cloud Assistant commands sent to the emulator's instances until the test
// ends: the upgrade script with upgradeExit (recording how many DeleteInstances calls came
// before it), any other script (the etcd member removal) with success.
type guest struct {
	mu               sync.Mutex
	upgradeExit      int
	upgrades         int
	deletesAtUpgrade []int
}

func (g *guest) serve(ctx context.Context, c *cloudtest.Cloud) {
	go func() {
		for ctx.Err() == nil {
			for _, p := range c.Emulator.PendingCommands() {
				code := 0
				if strings.Contains(p.Content, "kubeadm upgrade apply") {
					g.mu.Lock()
					code = g.upgradeExit
					g.upgrades++
					g.deletesAtUpgrade = append(g.deletesAtUpgrade, c.Calls("DeleteInstances"))
					g.mu.Unlock()
				}
				c.Emulator.FinishCommand(p.InvokeID, p.InstanceID, code, "done\n")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// TestRollRaisesClusterVersionFirst (issue #34): a control-plane pool whose nodes roll with a
// cluster upgrade script runs it on one of its running nodes before it deletes any; when the
// script fails nothing is deleted and the error says so; a pool without the script sends none.
func TestRollRaisesClusterVersionFirst(t *testing.T) {
	ctx, c, spec := startPool(t, 0, 2)
	spec.Role, spec.Types = bootstrap.RoleControlPlane, []string{"ecs.g7.xlarge"}
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatal(err)
	}
	before := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	g := &guest{upgradeExit: 1}
	gctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	g.serve(gctx, c)

	script, err := bootstrap.KubeadmUpgradeScript(bootstrap.Options{Versions: bootstrap.Versions{Kubernetes: "1.33"}})
	if err != nil {
		t.Fatal(err)
	}
	next := spec
	next.SpecHash, next.ClusterUpgrade = "spec-v2", script
	_, err = Reconcile(ctx, c.Client, next)
	if err == nil || !strings.Contains(err.Error(), "kubeadm upgrade apply") || !strings.Contains(err.Error(), "No node was replaced") {
		t.Fatalf("roll after a failed upgrade: %v, want the upgrade's failure", err)
	}
	if after := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID)); !slices.Equal(slices.Sorted(slices.Values(after)), slices.Sorted(slices.Values(before))) || c.Calls("DeleteInstances") != 0 {
		t.Fatalf("a failed upgrade replaced nodes: %v -> %v, %d deletes", before, after, c.Calls("DeleteInstances"))
	}

	g.mu.Lock()
	g.upgradeExit = 0
	g.mu.Unlock()
	if _, err := Reconcile(ctx, c.Client, next); err != nil {
		t.Fatalf("roll: %v", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.upgrades != 2 || !slices.Equal(g.deletesAtUpgrade, []int{0, 0}) {
		t.Errorf("upgrade script ran %d times, before deletes %v; want twice, each before any node was deleted", g.upgrades, g.deletesAtUpgrade)
	}
	if after := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID)); len(after) != 2 || slices.ContainsFunc(after, func(id string) bool { return slices.Contains(before, id) }) {
		t.Errorf("after the roll the pool is %v (before %v): want two new nodes", after, before)
	}

	// The same roll without a release change sends no upgrade.
	again := next
	again.SpecHash, again.ClusterUpgrade = "spec-v3", ""
	if _, err := Reconcile(ctx, c.Client, again); err != nil {
		t.Fatalf("roll without an upgrade: %v", err)
	}
	if g.upgrades != 2 {
		t.Errorf("a roll without ClusterUpgrade ran the upgrade script")
	}
}
