package nodepool

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acceptance"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
)

// gateGuest answers the acceptance script sent to the control-plane node with a report of the
// nodes it names: those bad says fail DCGM's PCIe test, the others pass; the all-reduce across
// them measures poolBusBW. It stands for the node and its cluster, not for the provider's
// client: the provider's calls go to the emulator over HTTP (the cluster tests run the node
// agent's model instead).
type gateGuest struct {
	mu        sync.Mutex
	bad       func(id string) bool
	poolBusBW float64
	runs      [][]string // the instance ids each run checked
	runners   []string
}

var gateNodesRE = regexp.MustCompile(`(?m)^nodes='([^']*)'$`)

func (g *gateGuest) serve(ctx context.Context, c *cloudtest.Cloud) {
	go func() {
		for ctx.Err() == nil {
			for _, p := range c.Emulator.PendingCommands() {
				if !strings.Contains(p.Content, acceptance.MarkerLine) {
					continue
				}
				g.mu.Lock()
				r := acceptance.Report{Pool: "np-x", AllReduce: &acceptance.AllReduce{Ranks: 2, BusBWGBs: g.poolBusBW}}
				var ids []string
				for _, pair := range strings.Fields(gateNodesRE.FindStringSubmatch(p.Content)[1]) {
					id, name, _ := strings.Cut(pair, "=")
					ids = append(ids, id)
					res := acceptance.NodeResult{InstanceID: id, Node: name, DCGM: acceptance.DCGM{Level: 2}}
					if g.bad(id) {
						res.DCGM = acceptance.DCGM{Level: 2, ExitCode: 226, Failed: []string{"PCIe"}}
					}
					r.Nodes = append(r.Nodes, res)
				}
				g.runs, g.runners = append(g.runs, ids), append(g.runners, p.InstanceID)
				g.mu.Unlock()
				line, _ := json.Marshal(r)
				c.Emulator.FinishCommand(p.InvokeID, p.InstanceID, 0, "applying jobs\n"+acceptance.ReportPrefix+string(line)+"\n")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// startGatedPool is a control-plane pool of one node ("cp") and a GPU pool of size nodes gated
// with at most most replacements, checked by the guest.
func startGatedPool(t *testing.T, size, most int, g *gateGuest) (context.Context, *cloudtest.Cloud, Spec, Outcome) {
	t.Helper()
	ctx, c, spec := startPool(t, 0, size)
	spec.Scenario = "ai_training"
	cp := spec
	cp.PoolID, cp.Name, cp.Role, cp.Types, cp.Size = NewPoolID(), "cp", bootstrap.RoleControlPlane, []string{"ecs.g7.xlarge"}, 1
	if _, err := Grow(ctx, c.Client, cp, "create", nil, 1); err != nil {
		t.Fatal(err)
	}
	spec.Acceptance = &Gate{Timeout: time.Minute, MaxReplacements: most, ControlPlanePool: "cp", Network: spec.Network.ID,
		Script: func(poolID string, nodes []acceptance.Node) (string, error) {
			return acceptance.Script(acceptance.Options{PoolID: poolID, GPUs: 1, Nodes: nodes})
		}}
	out, err := Grow(ctx, c.Client, spec, "create", nil, size)
	if err != nil {
		t.Fatal(err)
	}
	gctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	g.serve(gctx, c)
	return ctx, c, spec, out
}

// TestGateReplacesAFailedNode: the node that fails DCGM is replaced (stopped, deleted, a new one
// made) and the pool checked again on the control-plane pool's node; the second round passes.
func TestGateReplacesAFailedNode(t *testing.T) {
	g := &gateGuest{poolBusBW: 100}
	var badID string
	g.bad = func(id string) bool { return id == badID }
	ctx, c, spec, out := startGatedPool(t, 2, 2, g)
	badID = out.IDs[0]
	res, err := RunAcceptance(ctx, c.Client, spec, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verdict.Passed() || !slices.Equal(res.Replaced, []string{badID}) || len(g.runs) != 2 {
		t.Fatalf("gate: %+v after %d runs, want the failed node replaced and the second run passed", res, len(g.runs))
	}
	now := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	if len(now) != 2 || slices.Contains(now, badID) || !slices.Equal(slices.Sorted(slices.Values(now)), slices.Sorted(slices.Values(out.IDs))) {
		t.Errorf("pool after the gate %v, outcome %v: want two nodes without %s", now, out.IDs, badID)
	}
	if !slices.Contains(g.runs[1], out.IDs[0]) || !slices.Contains(g.runs[1], out.IDs[1]) {
		t.Errorf("the second run checked %v, want the pool's nodes %v", g.runs[1], out.IDs)
	}
	for _, r := range g.runners {
		if slices.Contains(now, r) || r == badID {
			t.Errorf("the checks ran on %s, a node of the gated pool; want the control-plane pool's node", r)
		}
	}
}

// TestGateStopsAtMaxReplacements: nodes that keep failing are replaced up to max, then the error
// names each failing node, the check and the figure, and the nodes are kept.
func TestGateStopsAtMaxReplacements(t *testing.T) {
	g := &gateGuest{poolBusBW: 100, bad: func(string) bool { return true }}
	ctx, c, spec, out := startGatedPool(t, 2, 2, g)
	_, err := RunAcceptance(ctx, c.Client, spec, &out)
	if err == nil {
		t.Fatal("the gate passed nodes that fail DCGM")
	}
	msg := err.Error()
	for _, want := range []string{"2 nodes failed the checks", "replaced 2 of at most 2 nodes (max_replacements)", "DCGM level-2 diagnostic (dcgmi diag -r 2) failed: PCIe (exit 226)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	for _, id := range out.IDs {
		if !strings.Contains(msg, "node "+id) {
			t.Errorf("the error does not name node %s: %s", id, msg)
		}
	}
	if now := poolNodes(ctx, t, c, spec.PoolID); len(now) != 2 {
		t.Errorf("%d nodes after the gate gave up, want the 2 failing ones kept", len(now))
	}
}

// TestGatePoolFailureReplacesNothing: an all-reduce across the pool under its floor names no
// node; the gate fails with the figure and replaces none.
func TestGatePoolFailureReplacesNothing(t *testing.T) {
	g := &gateGuest{poolBusBW: 0.01, bad: func(string) bool { return false }}
	ctx, c, spec, out := startGatedPool(t, 2, 2, g)
	before := slices.Clone(out.IDs)
	_, err := RunAcceptance(ctx, c.Client, spec, &out)
	if err == nil || !strings.Contains(err.Error(), "across the pool") || !strings.Contains(err.Error(), "busbw 0.0 GB/s, under the floor") {
		t.Fatalf("gate: %v, want the all-reduce across the pool named with its figure", err)
	}
	if c.Calls("DeleteInstances") != 0 || !slices.Equal(out.IDs, before) {
		t.Errorf("a pool-wide failure replaced nodes: %v -> %v", before, out.IDs)
	}
}
