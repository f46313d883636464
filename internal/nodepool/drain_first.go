package nodepool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// Before a roll's wave or a shrink stops its nodes, each node drains itself through the Eviction
// API (bootstrap.DrainScript, run through Cloud Assistant: the provider's one way into the
// cluster), so PodDisruptionBudgets hold: the graceful node shutdown that follows terminates
// pods without asking any budget (bootstrap/drain.go says why this matters).
//
// Decided (the issue is silent on a budget that never allows the eviction): a node whose pods
// are still there after update_strategy.drain_timeout stops the apply before any node of the
// wave is stopped, with an error naming the pods, and the script uncordons it; a budget is the
// user's own statement that the pods must not go. A node the drain cannot reach (Cloud Assistant
// did not deliver the command, the node's API server did not answer, the command failed
// otherwise) is stopped as before, with a warning: the graceful node shutdown still terminates
// its pods, and a broken node must not block a roll that replaces it.

// drainParallel bounds the drain commands of one wave in flight: each polls its invocation.
const drainParallel = 10

// DrainNodes drains the running nodes among current that victims names, all at once, each for at
// most spec.DrainTimeout (0: none is drained). An error means a node kept pods its budgets
// would not let go: nothing may be stopped.
func DrainNodes(ctx context.Context, c *cloud.Client, spec Spec, current []cloud.Instance, victims []string) (warnings []string, err error) {
	if spec.DrainTimeout <= 0 || len(victims) == 0 {
		return nil, nil
	}
	going := map[string]bool{}
	for _, v := range victims {
		going[v] = true
	}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		kept    []string
		slots   = make(chan struct{}, drainParallel)
		outcome = func(w, k string) {
			mu.Lock()
			defer mu.Unlock()
			if w != "" {
				warnings = append(warnings, w)
			}
			if k != "" {
				kept = append(kept, k)
			}
		}
	)
	for _, n := range current {
		if !going[n.ID] || n.Status != "Running" || n.HostName == "" {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			outcome(drainNode(ctx, c, spec, n.ID, strings.ToLower(n.HostName)))
		}()
	}
	wg.Wait()
	slices.Sort(warnings) // in the nodes' order, not the goroutines'
	slices.Sort(kept)
	if len(kept) > 0 {
		return warnings, fmt.Errorf("node pool %s: %s. No node was stopped; the nodes named were uncordoned (others of the wave that drained stay cordoned until the next apply). A PodDisruptionBudget refused these pods' "+
			"eviction for update_strategy.drain_timeout (%s): let the workload run a replica elsewhere first (more replicas, or a node free for them), "+
			"relax the budget, or raise update_strategy.drain_timeout (\"0s\" stops the nodes without draining them), then apply again",
			spec.Name, strings.Join(kept, "; "), spec.DrainTimeout)
	}
	return warnings, ctx.Err()
}

// drainNode drains one node: a warning when the drain could not run, kept when pods stayed.
func drainNode(ctx context.Context, c *cloud.Client, spec Spec, id, node string) (warning, kept string) {
	script, err := bootstrap.DrainScript(node, spec.DrainTimeout)
	if err != nil {
		return fmt.Sprintf("node pool %s: node %s (%s) was not drained: %v; it is stopped all the same", spec.Name, node, id, err), ""
	}
	// The script's own rounds end at DrainTimeout; the cordon before them and the last listing
	// after take seconds.
	res, err := c.RunShellScript(ctx, id, "gpucluster-drain", script, spec.DrainTimeout+time.Minute)
	switch {
	case err != nil:
		return fmt.Sprintf("node pool %s: node %s (%s) was not drained: %v; it is stopped all the same (the kubelet's graceful shutdown terminates its pods)", spec.Name, node, id, err), ""
	case res.Status == "Success":
		tflog.Info(ctx, fmt.Sprintf("node pool %s: %s", spec.Name, strings.TrimSpace(res.Output)))
		return "", ""
	case res.ExitCode == bootstrap.DrainExitPodsLeft && !undelivered(res):
		return "", fmt.Sprintf("node %s (%s): %s", node, id, lastLine(res.Output))
	default:
		return fmt.Sprintf("node pool %s: node %s (%s) was not drained: Cloud Assistant %s %s, exit code %d, output %q; it is stopped all the same "+
			"(the kubelet's graceful shutdown terminates its pods, without asking their PodDisruptionBudgets)", spec.Name, node, id, res.Status, res.ErrorCode, res.ExitCode, lastLine(res.Output)), ""
	}
}

// lastLine is the last non-empty line of a command's output.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
