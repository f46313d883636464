package acceptance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

// Parse reads the report out of the script's output: the one line that starts with
// ReportPrefix. An error quotes the end of the output when there is none (the script died
// before it: kubectl without a cluster, no python3).
func Parse(output string) (Report, error) {
	for _, line := range strings.Split(output, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), ReportPrefix); ok {
			var r Report
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				return Report{}, fmt.Errorf("the acceptance report is not JSON: %w", err)
			}
			return r, nil
		}
	}
	tail := strings.TrimSpace(output)
	if len(tail) > 600 {
		tail = "..." + tail[len(tail)-600:]
	}
	return Report{}, fmt.Errorf("the acceptance script printed no report; its output ends: %q", tail)
}

// NodeVerdict is one node's outcome: what was measured, against which floor, and, when it
// failed, the check and the figure.
type NodeVerdict struct {
	InstanceID string
	Node       string
	Passed     bool
	// DCGM is "passed" or what failed ("failed: PCIe, GPU Memory (exit 226)").
	DCGM string
	// BusBWGBs and FloorGBs are the in-node all-reduce's busbw and its floor (0 for a one-GPU
	// node, which has no link between GPUs to measure).
	BusBWGBs, FloorGBs float64
	// Failure names the check and the figure; "" when the node passed.
	Failure string
}

// PoolVerdict is the checks across the pool's nodes.
type PoolVerdict struct {
	// BusBWGBs, FloorGBs: the all-reduce over every node (0 for one node).
	BusBWGBs, FloorGBs float64
	// Efficiency and Target: HPCG's strong-scaling efficiency and the scenario's target (0 when
	// not measured).
	Efficiency, Target float64
	FP64GFlops         float64
	// Failures name each check that failed and its figure.
	Failures []string
}

// Verdict is the gate's outcome on one report.
type Verdict struct {
	Nodes []NodeVerdict
	Pool  PoolVerdict
}

// FailedNodes are the nodes that failed a check of their own.
func (v Verdict) FailedNodes() []NodeVerdict {
	var out []NodeVerdict
	for _, n := range v.Nodes {
		if !n.Passed {
			out = append(out, n)
		}
	}
	return out
}

// Passed says whether every node and every check across them passed.
func (v Verdict) Passed() bool { return len(v.FailedNodes()) == 0 && len(v.Pool.Failures) == 0 }

// Judge reaches the verdict on a report of the nodes want, of instanceType, for scenario: a node
// fails on a missing result, a check that did not run, a DCGM test failed, or an in-node busbw
// under health.AllReduceFloor(instanceType, 1); the pool fails on a cross-node busbw under
// AllReduceFloor(instanceType, n) or an efficiency under health.ParallelEfficiencyTarget.
func Judge(r Report, instanceType, scenario string, want []Node) (Verdict, error) {
	byID := map[string]NodeResult{}
	for _, n := range r.Nodes {
		byID[n.InstanceID] = n
	}
	var v Verdict
	var nodeFloor health.Floor
	gpus := 0
	if p, err := health.PathsOf(instanceType); err == nil {
		gpus = p.GPUs
	} else {
		return Verdict{}, err
	}
	if gpus > 1 {
		f, err := health.AllReduceFloor(instanceType, 1)
		if err != nil {
			return Verdict{}, err
		}
		nodeFloor = f
	}
	for _, w := range want {
		res, ok := byID[w.InstanceID]
		nv := NodeVerdict{InstanceID: w.InstanceID, Node: w.Name, FloorGBs: nodeFloor.GBs, DCGM: "not run"}
		switch {
		case !ok:
			nv.Failure = "no result in the acceptance report"
		case res.Error != "":
			nv.Failure = "the node's checks did not run: " + res.Error
		default:
			nv.DCGM = dcgmSummary(res.DCGM)
			nv.Failure = nodeFailure(res, nv.DCGM, nodeFloor, gpus)
			if res.AllReduce != nil {
				nv.BusBWGBs = res.AllReduce.BusBWGBs
			}
		}
		nv.Passed = nv.Failure == ""
		v.Nodes = append(v.Nodes, nv)
	}
	pool, err := judgePool(r, instanceType, scenario, len(want))
	v.Pool = pool
	return v, err
}

func dcgmSummary(d DCGM) string {
	switch {
	case d.ExitCode == 0 && len(d.Failed) == 0:
		return "passed"
	case len(d.Failed) > 0:
		return fmt.Sprintf("failed: %s (exit %d)", strings.Join(d.Failed, ", "), d.ExitCode)
	default:
		return fmt.Sprintf("failed (exit %d): %s", d.ExitCode, d.Detail)
	}
}

// nodeFailure is the first check res fails, "" when none.
func nodeFailure(res NodeResult, dcgm string, floor health.Floor, gpus int) string {
	if dcgm != "passed" {
		return fmt.Sprintf("DCGM level-%d diagnostic (dcgmi diag -r %d) %s", res.DCGM.Level, res.DCGM.Level, dcgm)
	}
	if gpus < 2 {
		return ""
	}
	ar := res.AllReduce
	switch {
	case ar == nil:
		return "all_reduce_perf over the node's GPUs reported nothing"
	case ar.Error != "":
		return "all_reduce_perf over the node's GPUs failed: " + ar.Error
	case !floor.Passes(ar.BusBWGBs):
		return fmt.Sprintf("all_reduce_perf over the node's %d GPUs: busbw %.1f GB/s, under the floor of %.1f GB/s (%.0f%% of %s's %.1f GB/s each way)",
			ar.Ranks, ar.BusBWGBs, floor.GBs, floor.Efficiency*100, floor.Bottleneck.Kind, floor.Bottleneck.PeakGBs)
	}
	return ""
}

// judgePool judges the checks across n nodes.
func judgePool(r Report, instanceType, scenario string, n int) (PoolVerdict, error) {
	var pv PoolVerdict
	if n < 2 {
		return pv, nil
	}
	floor, err := health.AllReduceFloor(instanceType, n)
	if err != nil {
		return pv, err
	}
	pv.FloorGBs = floor.GBs
	switch ar := r.AllReduce; {
	case ar == nil:
		pv.Failures = append(pv.Failures, "the all-reduce across the pool's nodes reported nothing")
	case ar.Error != "":
		pv.Failures = append(pv.Failures, "the all-reduce across the pool's nodes failed: "+ar.Error)
	default:
		pv.BusBWGBs = ar.BusBWGBs
		if !floor.Passes(ar.BusBWGBs) {
			pv.Failures = append(pv.Failures, fmt.Sprintf("the all-reduce across the pool's %d nodes: busbw %.1f GB/s, under the floor of %.1f GB/s (%.0f%% of %s's %.1f GB/s each way)",
				n, ar.BusBWGBs, floor.GBs, floor.Efficiency*100, floor.Bottleneck.Kind, floor.Bottleneck.PeakGBs))
		}
	}
	target, err := health.ParallelEfficiencyTarget(scenario)
	if err != nil || !target.Set {
		return pv, err
	}
	pv.Target = target.Min
	switch m := r.MPI; {
	case m == nil:
		pv.Failures = append(pv.Failures, "the MPI scaling check (HPCG) reported nothing")
	case m.Error != "":
		pv.Failures = append(pv.Failures, "the MPI scaling check (HPCG) failed: "+m.Error)
	default:
		e, err := health.ParallelEfficiency(m.BaseNodes, m.BaseSeconds, m.Nodes, m.Seconds)
		if err != nil {
			pv.Failures = append(pv.Failures, "the MPI scaling check (HPCG): "+err.Error())
			break
		}
		pv.Efficiency, pv.FP64GFlops = e, m.FP64GFlops
		if !target.Meets(e) {
			pv.Failures = append(pv.Failures, fmt.Sprintf("the MPI scaling check (HPCG) from %d to %d nodes: parallel efficiency %.0f%%, under the %s target of %.0f%%",
				m.BaseNodes, m.Nodes, e*100, scenario, target.Min*100))
		}
	}
	return pv, nil
}
