package nodepool

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

func TestGrowFallsBackToTheNextZoneOnAStockOut(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 5)
	// Zone a has two of the type left: they are taken (MinAmount 1), the rest comes from b.
	c.Emulator.SetCapacity(map[string]map[string]int{zoneA: {testType: 2}})

	out, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size)
	if err != nil {
		t.Fatalf("Grow: %v", err)
	}
	if len(out.IDs) != 5 || len(out.Running) != 5 {
		t.Fatalf("Grow made %d nodes (%d running), want 5", len(out.IDs), len(out.Running))
	}
	if got, want := zonesOf(poolNodes(ctx, t, c, spec.PoolID)), map[string]int{zoneA: 2, zoneB: 3}; !maps.Equal(got, want) {
		t.Errorf("nodes per zone = %v, want %v", got, want)
	}
	if len(out.Attempts) != 2 || !strings.Contains(out.Attempts[0], zoneA) || !strings.Contains(out.Attempts[0], "2 of 5") {
		t.Errorf("attempts = %q, want zone a's 2 of 5 first, then zone b", out.Attempts)
	}
}

func TestGrowBelowMinSizeSaysWhatWasTried(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 4)
	spec.MinSize = 3
	c.Emulator.SetCapacity(map[string]map[string]int{zoneA: {testType: 1}, zoneB: {testType: 1}})

	out, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size)
	if err == nil || !strings.Contains(err.Error(), "below min_size = 3") {
		t.Fatalf("Grow error = %v, want the min_size shortfall", err)
	}
	// The two nodes that were made are still answered, so the state records them.
	if len(out.IDs) != 2 {
		t.Errorf("outcome lists %d nodes, want the 2 that were created", len(out.IDs))
	}
	for _, z := range []string{zoneA, zoneB} {
		if !strings.Contains(err.Error(), testType+" in "+z) {
			t.Errorf("error does not say %s was tried: %v", z, err)
		}
	}
}

func TestGrowTagsEveryNode(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 2)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatalf("Grow: %v", err)
	}
	want := NodeTags(spec)
	for _, n := range poolNodes(ctx, t, c, spec.PoolID) {
		for k, v := range want {
			if n.Tags[k] != v {
				t.Errorf("node %s: tag %s = %q, want %q", n.ID, k, n.Tags[k], v)
			}
		}
	}
}

// Throttled calls are retried and answers lost after the service acted are resent with the same
// ClientToken: the pool ends with exactly its size, never a duplicate batch.
func TestGrowUnderThrottlingAndLostAnswersMakesExactlySize(t *testing.T) {
	ctx, c, spec := startPool(t, 8, 6)
	spec.Zones = spec.Zones[:1]
	c.Emulator.SetFaults(emulator.Faults{ThrottleRate: 0.3, ResetRate: 0.1})

	out, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size)
	c.Emulator.SetFaults(emulator.Faults{})
	if err != nil {
		t.Fatalf("Grow under faults: %v", err)
	}
	nodes := poolNodes(ctx, t, c, spec.PoolID)
	if len(nodes) != 6 || len(out.IDs) != 6 {
		t.Errorf("the cloud holds %d nodes and the outcome %d, want exactly 6", len(nodes), len(out.IDs))
	}
	if c.Errors("Throttling.User") == 0 {
		t.Error("no call was throttled: the test proved nothing")
	}
}

// A create killed after its nodes were made, before the state saved the pool's id: the next
// apply gets a new pool id, finds the nodes by name and network, adopts them and makes none.
func TestCreateAfterAnInterruptedApplyAdoptsItsNodes(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 3)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatalf("first (interrupted) apply: %v", err)
	}
	first := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	runs := c.Calls("RunInstances")

	spec.PoolID = NewPoolID()
	orphans, err := AdoptOrphans(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("AdoptOrphans: %v", err)
	}
	out, err := Grow(ctx, c.Client, spec, "create", orphans, spec.Size)
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if n := c.Calls("RunInstances") - runs; n != 0 {
		t.Errorf("the second apply made %d RunInstances calls, want none", n)
	}
	adopted := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	slices.Sort(first)
	slices.Sort(adopted)
	if !slices.Equal(first, adopted) || len(out.IDs) != 3 {
		t.Errorf("new pool id tags %v (outcome %v), want the first apply's nodes %v", adopted, out.IDs, first)
	}
	for _, n := range poolNodes(ctx, t, c, spec.PoolID) {
		if n.Tags[tagging.Pool] != spec.PoolID {
			t.Errorf("node %s carries pool %q, want %q", n.ID, n.Tags[tagging.Pool], spec.PoolID)
		}
	}
}
