package nodepool

import (
	"slices"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// New launch settings roll the pool in waves of at most MaxUnavail: three outdated nodes with
// MaxUnavail 2 are two waves, each one delete and one RunInstances call, and every node after it
// is new and carries the new spec.
func TestReconcileRollsOutdatedNodesInWaves(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 3)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatalf("create: %v", err)
	}
	old := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	runs, deletes := c.Calls("RunInstances"), c.Calls("DeleteInstances")

	spec.SpecHash, spec.MaxUnavail = "spec-v2", 2
	out, err := Reconcile(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if n := c.Calls("RunInstances") - runs; n != 2 {
		t.Errorf("%d RunInstances calls, want 2 (one per wave)", n)
	}
	if n := c.Calls("DeleteInstances") - deletes; n != 2 {
		t.Errorf("%d DeleteInstances calls, want 2 (one per wave)", n)
	}
	nodes := poolNodes(ctx, t, c, spec.PoolID)
	if len(nodes) != 3 || len(out.IDs) != 3 {
		t.Fatalf("pool holds %d nodes (outcome %d), want 3", len(nodes), len(out.IDs))
	}
	for _, n := range nodes {
		if slices.Contains(old, n.ID) || n.Tags[tagging.Spec] != "spec-v2" {
			t.Errorf("node %s (spec %q) was not replaced", n.ID, n.Tags[tagging.Spec])
		}
	}
}

// A smaller size removes the newest nodes first and rolls nothing; changed user tags are put on
// the nodes that stay, removed ones taken off.
func TestReconcileShrinksNewestFirstAndRetags(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 2)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, 2); err != nil {
		t.Fatalf("create: %v", err)
	}
	first := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	if _, err := Grow(ctx, c.Client, spec, "update-grow", poolNodes(ctx, t, c, spec.PoolID), 3); err != nil {
		t.Fatalf("growing to 3: %v", err)
	}
	runs := c.Calls("RunInstances")

	spec.Size = 2
	spec.UserTags = map[string]string{"owner": "research"}
	if _, err := Reconcile(ctx, c.Client, spec); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if n := c.Calls("RunInstances") - runs; n != 0 {
		t.Errorf("shrinking made %d RunInstances calls, want none", n)
	}
	nodes := poolNodes(ctx, t, c, spec.PoolID)
	kept := InstanceIDs(nodes)
	slices.Sort(first)
	slices.Sort(kept)
	if !slices.Equal(kept, first) {
		t.Errorf("kept %v, want the two oldest %v", kept, first)
	}
	for _, n := range nodes {
		if n.Tags["owner"] != "research" || n.Tags["team"] != "" {
			t.Errorf("node %s tags %v: want owner=research and no team", n.ID, n.Tags)
		}
	}
}

func TestDeleteNodesFindsNodesTheStateMissed(t *testing.T) {
	ctx, c, spec := startPool(t, 3, 3)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatalf("create: %v", err)
	}
	known := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))[:1] // the state knew one node only
	if warnings, err := DeleteNodes(ctx, c.Client, spec.PoolID, "", known); err != nil || len(warnings) > 0 {
		t.Fatalf("DeleteNodes: %v, warnings %q", err, warnings)
	}
	if left := poolNodes(ctx, t, c, spec.PoolID); len(left) != 0 {
		t.Errorf("%d nodes left after the delete", len(left))
	}
}
