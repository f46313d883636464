package poolbench

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkScenarioModuleAITraining measures the ai-training module as a research team would
// apply it: its network, hot tier and cold bucket with cache, a control plane of 3 behind the
// internal load balancer, the add-ons, and one GPU pool of 1,000 nodes. It prints the calls, wall
// time and provider CPU of the apply, of a no-change plan and of the destroy. Targets from the
// scale issue: apply within the boot time (2 s) + 25 s; the no-change plan in at most 40 calls.
func BenchmarkScenarioModuleAITraining(b *testing.B) {
	if testing.Short() {
		b.Skip("module benchmark skipped in -short mode: it builds the provider and applies 1,000 GPU nodes")
	}
	const nodes = 1000
	h := newHarness(b)
	h.poolDir = filepath.Join(filepath.Dir(h.poolDir), "ai-training")
	// A local path, relative: an absolute one is fetched as a package of its own, and the
	// module's ../scenario-cluster would then escape it.
	source, err := filepath.Rel(h.poolDir, filepath.Join(repoRoot(), "modules", "ai-training"))
	if err != nil {
		b.Fatal(err)
	}
	h.write(h.poolDir, fmt.Sprintf(`terraform {
  required_providers {
    gpucluster = { source = "gpucluster/gpucluster" }
  }
}
provider "gpucluster" {}
module "cluster" {
  source          = %q
  name            = "bench-ait"
  join_token_salt = "bench"
  cold_storage    = { bucket_name = "bench-ait-cold-0001", force_destroy = true }
  control_plane   = { size = 3 }
  worker_pools    = { gpu = { size = %d, max_unavailable = 100 } }
  # The emulator alone answers here, with no Kubernetes API: no control-plane node could run the
  # acceptance gate's checks. This measures the module's cloud calls.
  acceptance = { enabled = false }
}
`, source, nodes))
	// get, not init: with dev_overrides, init would ask the registry for the provider.
	h.run(h.poolDir, "get", "-no-color")
	for i := 0; i < b.N; i++ {
		apply := h.measure("apply", "apply", "-auto-approve", "-input=false", "-no-color")
		plan := h.measure("no-change plan", "plan", "-detailed-exitcode", "-input=false", "-no-color")
		destroy := h.measure("destroy", "destroy", "-auto-approve", "-input=false", "-no-color")
		if left := len(h.emu.Resources().Instances); left != 0 {
			b.Fatalf("%d instances left after destroy", left)
		}
		for _, p := range []phase{apply, plan, destroy} {
			b.Logf("| ai-training, %d GPU nodes | %-14s | %5d | %7.1fs | %6.1fs | %6.1fs | %6.1f MB | %s |", nodes, p.name, p.total, p.wall.Seconds(),
				p.cpu.Seconds(), p.serve.Seconds(), float64(p.peakKB)/1024, formatCalls(p.calls))
		}
		b.ReportMetric(float64(apply.total), "apply-calls")
		b.ReportMetric(apply.wall.Seconds(), "apply-s")
		b.ReportMetric(float64(plan.total), "plan-calls")
		b.ReportMetric(float64(destroy.total), "destroy-calls")
	}
}
