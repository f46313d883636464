package nodepool

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acceptance"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The acceptance gate (issue #33): once a fixed pool's nodes run, the apply has a control-plane
// node check them (internal/acceptance's script, through Cloud Assistant, as RaiseClusterVersion
// runs kubeadm upgrade apply), judges the report with internal/health's floors, replaces the
// nodes that failed a check of their own the way a shrink removes a node (stopped normally
// first, then deleted: RemoveNodes) and checks again, at most MaxReplacements nodes in all. A
// failure across the pool (the all-reduce between nodes, MPI scaling) names no node to replace:
// the apply fails with the figure.

// Gate is a pool's acceptance gate.
type Gate struct {
	Timeout         time.Duration
	MaxReplacements int
	// ControlPlanePool is the name of the pool, in Network, whose running node runs the checks.
	ControlPlanePool, Network string
	// Script renders the checks for the nodes (acceptance.Script with the pool's settings).
	Script func(poolID string, nodes []acceptance.Node) (string, error)
}

// GateOutcome is what the gate saw last: the verdict and the nodes it replaced.
type GateOutcome struct {
	Verdict  acceptance.Verdict
	Replaced []string
	Checked  bool
}

// RunAcceptance runs spec.Acceptance over the pool's nodes in out, replacing failed nodes and
// checking again; out follows the replacements (its IDs and Running), so the caller records the
// nodes that exist whatever the gate's end.
func RunAcceptance(ctx context.Context, c *cloud.Client, spec Spec, out *Outcome) (GateOutcome, error) {
	var g GateOutcome
	gate := spec.Acceptance
	if gate == nil || len(out.IDs) == 0 {
		return g, nil
	}
	for round := 1; ; round++ {
		// The grow's last wait saw every node already when it covered them all (as the
		// provider's recordNodes uses it); otherwise, or after a failed wait, read them.
		nodes := out.Running
		if len(nodes) != len(out.IDs) {
			var err error
			if nodes, err = c.DescribeInstancesByID(ctx, out.IDs); err != nil {
				return g, fmt.Errorf("acceptance gate: reading the nodes: %w", err)
			}
		}
		report, err := runChecks(ctx, c, spec.PoolID, gate, nodes)
		if err != nil {
			return g, err
		}
		want := gateNodes(nodes)
		g.Verdict, err = acceptance.Judge(report, nodes[0].InstanceType, spec.Scenario, want)
		g.Checked = true
		if err != nil {
			return g, fmt.Errorf("acceptance gate: %w", err)
		}
		failed := g.Verdict.FailedNodes()
		if len(failed) == 0 {
			if f := g.Verdict.Pool.Failures; len(f) > 0 {
				return g, fmt.Errorf("acceptance gate: every node passed its own checks, but across the pool:\n  %s\n"+
					"No single node to replace: check the network between the nodes (eRDMA, the deployment set), then apply again, "+
					"or turn the gate off with acceptance = { enabled = false }", strings.Join(f, "\n  "))
			}
			tflog.Info(ctx, fmt.Sprintf("node pool %s: %d nodes passed the acceptance gate (round %d)", spec.PoolID, len(nodes), round))
			return g, nil
		}
		if len(g.Replaced)+len(failed) > gate.MaxReplacements {
			return g, gateExhausted(failed, len(g.Replaced), gate.MaxReplacements)
		}
		ids := make([]string, len(failed))
		for i, f := range failed {
			ids[i] = f.InstanceID
			tflog.Warn(ctx, fmt.Sprintf("node pool %s: replacing node %s (%s): %s", spec.PoolID, f.InstanceID, f.Node, f.Failure))
		}
		if err := out.removeNodes(ctx, c, ids); err != nil {
			return g, fmt.Errorf("acceptance gate: replacing nodes %s that failed: %w", strings.Join(ids, ", "), err)
		}
		g.Replaced = append(g.Replaced, ids...)
		kept := withoutIDs(nodes, ids)
		grown, err := Grow(ctx, c, spec, fmt.Sprintf("acceptance-%d-%s", round, NewPoolID()[3:]), kept, spec.Size)
		out.IDs, out.Running, out.Attempts = grown.IDs, grown.Running, append(out.Attempts, grown.Attempts...)
		for typ, n := range grown.Used {
			out.Used[typ] += n
		}
		if err != nil {
			return g, fmt.Errorf("acceptance gate: creating the nodes that replace %s: %w", strings.Join(ids, ", "), err)
		}
	}
}

// runChecks runs the gate's script on a running control-plane node and reads its report.
func runChecks(ctx context.Context, c *cloud.Client, poolID string, gate *Gate, nodes []cloud.Instance) (acceptance.Report, error) {
	runner, err := gateRunner(ctx, c, gate)
	if err != nil {
		return acceptance.Report{}, err
	}
	script, err := gate.Script(poolID, gateNodes(nodes))
	if err != nil {
		return acceptance.Report{}, fmt.Errorf("acceptance gate: %w", err)
	}
	res, err := c.RunShellScript(ctx, runner, "gpucluster-acceptance", script, gate.Timeout)
	if err == nil && res.Status != "Success" {
		err = fmt.Errorf("%s %s, exit code %d, output: %q", res.Status, res.ErrorCode, res.ExitCode, res.Output)
	}
	if err != nil {
		return acceptance.Report{}, fmt.Errorf("acceptance gate: the checks did not run on control-plane node %s: %w. The nodes were created and are recorded; "+
			"apply again to check them, or turn the gate off with acceptance = { enabled = false }", runner, err)
	}
	return acceptance.Parse(res.Output)
}

// gateRunner is the running control-plane node the checks run on. The control-plane pool is
// found by its name and network tags; it may be created in the same apply, so the gate waits
// for its node to run, within the gate's timeout.
func gateRunner(ctx context.Context, c *cloud.Client, gate *Gate) (string, error) {
	tags := map[string]string{tagging.PoolName: gate.ControlPlanePool, tagging.PoolNetwork: gate.Network}
	ctx, cancel := context.WithTimeout(ctx, gate.Timeout)
	defer cancel()
	for {
		candidates, err := c.ListInstancesByTags(ctx, tags)
		if err != nil {
			return "", fmt.Errorf("acceptance gate: finding a node of control-plane pool %q: %w", gate.ControlPlanePool, err)
		}
		for _, n := range candidates {
			if n.Status == "Running" {
				return n.ID, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("acceptance gate: control-plane pool %q of network %s had no running node within %s to run the checks on (kubectl "+
				"with the cluster's admin credentials is there only); check acceptance.control_plane_pool", gate.ControlPlanePool, gate.Network, gate.Timeout)
		case <-time.After(gateRunnerPoll):
		}
	}
}

// gateRunnerPoll is how often the gate looks for a running control-plane node.
const gateRunnerPoll = 10 * time.Second

// gateNodes are the nodes as the script names them: kubeadm names a node after its host name,
// lowercased.
func gateNodes(nodes []cloud.Instance) []acceptance.Node {
	out := make([]acceptance.Node, len(nodes))
	for i, n := range nodes {
		out[i] = acceptance.Node{InstanceID: n.ID, Name: strings.ToLower(n.HostName)}
	}
	return out
}

// gateExhausted is the error once the nodes that failed would take the replacements past max.
func gateExhausted(failed []acceptance.NodeVerdict, replaced, most int) error {
	lines := make([]string, len(failed))
	for i, f := range failed {
		lines[i] = fmt.Sprintf("node %s (%s): %s", f.InstanceID, f.Node, f.Failure)
	}
	return fmt.Errorf("acceptance gate: %s failed the checks and the gate has replaced %d of at most %d nodes (max_replacements):\n  %s\n"+
		"The nodes are kept for inspection (the node's dcgmi diag and nvidia-smi). The next apply checks the pool again and replaces "+
		"the nodes that fail, up to max_replacements; raise it, or turn the gate off with acceptance = { enabled = false }",
		plural(len(failed), "node"), replaced, most, strings.Join(lines, "\n  "))
}

// plural is "1 node" or "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
