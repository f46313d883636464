package nodeagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acceptance"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

// gateScriptFor is the gate's script in the form the provider renders it: the marker, the
// assignments the agent reads, and commands the agent treats as opaque.
func gateScriptFor(pool string, gpus int, mpi, registry string, pairs ...string) string {
	return fmt.Sprintf(`#!/bin/bash
# gpucluster-acceptance: pool %s
set -euo pipefail
export KUBECONFIG=/etc/kubernetes/admin.conf
pool=%s
gpus=%d
mpi=%s
nodes='%s'
image_registry=%s
for pair in $nodes; do kubectl apply -f - <<<"$(render_job "$pair")"; done
`, pool, pool, gpus, mpi, strings.Join(pairs, " "), registry)
}

// gateRun is one run of the gate's script: its exit code, its output, and the report read from
// its one report line (nil when there is none).
type gateRun struct {
	code   int
	output string
	report *acceptance.Report
}

// runGate sends the script to instance id as Cloud Assistant would and runs one agent round.
func runGate(t *testing.T, a *Agent, q *commandQueue, id, script string) gateRun {
	t.Helper()
	return runGateWaiting(t, a, q, id, script, nil)
}

// runGateWaiting is runGate for a script that waits for a node that never joins: it stays
// unfinished until wait (moving the emulator's clock past the script's wait) has been called.
func runGateWaiting(t *testing.T, a *Agent, q *commandQueue, id, script string, wait func()) gateRun {
	t.Helper()
	invoke := fmt.Sprintf("t-%d", len(q.finished)+1)
	q.pending = append(q.pending, emulator.PendingCommand{InvokeID: invoke, InstanceID: id, Content: script})
	a.Sync(context.Background())
	if wait != nil {
		if _, done := q.finished[invoke]; done {
			t.Fatalf("the gate's script on %s finished before the node it waits for could join", id)
		}
		wait()
		a.Sync(context.Background())
	}
	out, done := q.finished[invoke]
	if !done {
		t.Fatalf("the agent left the gate's script on %s unfinished", id)
	}
	run := gateRun{code: q.codes[invoke], output: out}
	lines := 0
	for _, line := range strings.Split(out, "\n") {
		if body, ok := strings.CutPrefix(line, acceptance.ReportPrefix); ok {
			lines++
			run.report = &acceptance.Report{}
			if err := json.Unmarshal([]byte(body), run.report); err != nil {
				t.Fatalf("report line %q: %v", line, err)
			}
		}
	}
	if lines > 1 {
		t.Fatalf("%d report lines in %q, want one", lines, out)
	}
	return run
}

// nodeResult is the report's result for the instance.
func nodeResult(t *testing.T, r *acceptance.Report, id string) acceptance.NodeResult {
	t.Helper()
	for _, n := range r.Nodes {
		if n.InstanceID == id {
			return n
		}
	}
	t.Fatalf("the report has no result for %s: %+v", id, r.Nodes)
	return acceptance.NodeResult{}
}

// TestAcceptanceGateThroughTheEmulator: GPU nodes launched through the SDK, two of them faulted
// before anyone knew their ids (POST /_emulator/gpu_faults "next"), and the gate's script run
// on a control-plane node as Cloud Assistant delivers it. Healthy nodes pass dcgmi and reach
// internal/health's all-reduce floor inside the node and across the pool, with the healthy MPI
// efficiency; a degraded NVLink passes dcgmi and falls below the in-node floor; XID 79 fails
// dcgmi's pcie and memory tests, the pool's all-reduce and the MPI run; an unknown instance is
// a node result's error; the script on a worker fails as kubectl does without a kubeconfig;
// images from a registry the region does not reach fail every node's pull.
func TestAcceptanceGateThroughTheEmulator(t *testing.T) {
	ca := testCAs(t)[0]
	s := startCloud(t, true)
	cp := s.run(t, "ecs.g7.xlarge", "cp-0", renderDoc(t, s.behind(firstControlPlane(ca))))
	s.backends(t, cp)
	const typ = "ecs.ebmgn7ex.32xlarge" // 8 x A100 80GB over NVLink, eRDMA between nodes
	healthy1 := s.run(t, typ, "gpu-0", renderDoc(t, s.behind(gpuWorker(ca))))
	healthy2 := s.run(t, typ, "gpu-1", renderDoc(t, s.behind(gpuWorker(ca))))
	s.postGPUFault(t, `{"instance_id":"next","gpu":1,"nvlink_gbs":200}`)
	slowLink := s.run(t, typ, "gpu-2", renderDoc(t, s.behind(gpuWorker(ca))))
	s.postGPUFault(t, `{"instance_id":"next","gpu":5,"xid":79}`)
	offBus := s.run(t, typ, "gpu-3", renderDoc(t, s.behind(gpuWorker(ca))))
	a := s.startAgent(t, newFakeKube())
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}}
	a.CommandsWith(q.list, q.finish)
	s.settle(t, a, []string{cp, healthy1, healthy2, slowLink, offBus}, registered)

	inNode, err := health.AllReduceFloor(typ, 1)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := health.AllReduceFloor(typ, 2)
	if err != nil {
		t.Fatal(err)
	}
	reg := inRegionRegistry

	run := runGate(t, a, q, cp, gateScriptFor("np-healthy", 8, "hpcg", reg, healthy1+"=gpu-0", healthy2+"=gpu-1"))
	if run.code != 0 || run.report == nil {
		t.Fatalf("healthy pool: exit %d, output %q", run.code, run.output)
	}
	for _, id := range []string{healthy1, healthy2} {
		n := nodeResult(t, run.report, id)
		if n.Error != "" || n.DCGM.Level != 2 || n.DCGM.ExitCode != 0 || len(n.DCGM.Failed) > 0 || n.AllReduce == nil || !inNode.Passes(n.AllReduce.BusBWGBs) {
			t.Errorf("healthy node %s: %+v (all-reduce %+v), want dcgmi exit 0 and busbw above %.1f GB/s", id, n, n.AllReduce, inNode.GBs)
		}
	}
	if r := run.report.AllReduce; r == nil || r.Error != "" || r.Ranks != 16 || !pool.Passes(r.BusBWGBs) {
		t.Errorf("healthy pool's all-reduce %+v, want 16 ranks above %.1f GB/s", r, pool.GBs)
	}
	if m := run.report.MPI; m == nil || m.Error != "" || !near(efficiencyOf(t, m), mpiHealthyEfficiency) {
		t.Errorf("healthy pool's MPI run %+v, want efficiency %.2f", m, mpiHealthyEfficiency)
	}

	// i-nope never joins: the script waits for it (kubectl get node, then kubectl wait) for
	// gateNodeWait, then checks the others.
	run = runGateWaiting(t, a, q, cp, gateScriptFor("np-faults", 8, "hpcg", reg, healthy1+"=gpu-0", slowLink+"=gpu-2", offBus+"=gpu-3", "i-nope=gpu-9"),
		func() { s.srv.Advance(gateNodeWait + time.Minute) })
	if run.code != 0 || run.report == nil {
		t.Fatalf("faulty pool: exit %d, output %q", run.code, run.output)
	}
	if n := nodeResult(t, run.report, slowLink); n.Error != "" || n.DCGM.ExitCode != 0 || n.AllReduce == nil || n.AllReduce.Error != "" || inNode.Passes(n.AllReduce.BusBWGBs) {
		t.Errorf("node with NVLink at 200 GB/s: %+v (all-reduce %+v), want dcgmi exit 0 and busbw below %.1f GB/s", n, n.AllReduce, inNode.GBs)
	}
	n := nodeResult(t, run.report, offBus)
	if n.DCGM.ExitCode == 0 || strings.Join(n.DCGM.Failed, ",") != "pcie,memory" || !strings.Contains(n.DCGM.Detail, "GPU 5 has fallen off the bus") {
		t.Errorf("node with XID 79: dcgm %+v, want pcie and memory failed on GPU 5", n.DCGM)
	}
	if n := nodeResult(t, run.report, "i-nope"); !strings.Contains(n.Error, `nodes "gpu-9" not found`) {
		t.Errorf("unknown instance: %+v, want kubectl's NotFound", n)
	}
	if r := run.report.AllReduce; r == nil || r.Error == "" {
		t.Errorf("pool all-reduce with a missing node and a GPU off the bus: %+v, want an error", r)
	}
	if m := run.report.MPI; m == nil || m.Error == "" {
		t.Errorf("MPI run with a missing node: %+v, want an error", m)
	}
	run = runGate(t, a, q, cp, gateScriptFor("np-offbus", 8, "hpcg", reg, healthy1+"=gpu-0", offBus+"=gpu-3"))
	if m := run.report.MPI; m == nil || !strings.Contains(m.Error, "XID 79") {
		t.Errorf("MPI run with a GPU off the bus: %+v, want its error", m)
	}

	if run := runGate(t, a, q, healthy1, gateScriptFor("np-healthy", 8, "none", reg, healthy1+"=gpu-0")); run.code != 1 ||
		run.report != nil || !strings.Contains(run.output, "localhost:8080 was refused") {
		t.Errorf("the script on a worker: exit %d, output %q; want kubectl's error without a kubeconfig", run.code, run.output)
	}

	// Images in a registry the mainland does not reach and the nodes' containerd mirrors none of
	// (their hosts.toml files mirror the public registries by name: gcr.io, not asia.gcr.io).
	run = runGate(t, a, q, cp, gateScriptFor("np-elsewhere", 8, "none", "asia.gcr.io/team", healthy1+"=gpu-0", healthy2+"=gpu-1"))
	for _, id := range []string{healthy1, healthy2} {
		if n := nodeResult(t, run.report, id); !strings.Contains(n.Error, "ErrImagePull") || !strings.Contains(n.Error, "ImagePullBackOff") {
			t.Errorf("node %s with images from asia.gcr.io in %s: %+v, want the pull's failure", id, testRegion, n)
		}
	}
}

// efficiencyOf is the MPI run's strong-scaling efficiency as the provider reads it.
func efficiencyOf(t *testing.T, m *acceptance.MPIScaling) float64 {
	t.Helper()
	e, err := health.ParallelEfficiency(m.BaseNodes, m.BaseSeconds, m.Nodes, m.Seconds)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestMPIScalingModel: healthy nodes scale at the model's efficiency, whatever their count; one
// node's eRDMA at a quarter of its peak quadruples the communication share; an eRDMA figure on
// a type without eRDMA changes nothing.
func TestMPIScalingModel(t *testing.T) {
	const rdma, vpcOnly = "ecs.ebmgn7ex.32xlarge", "ecs.gn7e-c16g1.16xlarge"
	quarter := 160.0 / 4 // ebmgn7ex: 160 Gbit/s of eRDMA
	cases := []struct {
		name string
		ins  []*emulator.InstanceView
		want float64
	}{
		{"two healthy nodes", []*emulator.InstanceView{gpuInstance("i-1", rdma, 8), gpuInstance("i-2", rdma, 8)}, 0.95},
		{"four healthy nodes", []*emulator.InstanceView{gpuInstance("i-1", rdma, 8), gpuInstance("i-2", rdma, 8), gpuInstance("i-3", rdma, 8), gpuInstance("i-4", rdma, 8)}, 0.95},
		{"one node's eRDMA at a quarter", []*emulator.InstanceView{gpuInstance("i-1", rdma, 8), gpuInstance("i-2", rdma, 8, emulator.GPUFault{GPU: 0, ERDMAGbps: quarter})},
			1 / (1 + 4*(1/0.95-1))},
		{"no eRDMA to degrade", []*emulator.InstanceView{gpuInstance("i-1", vpcOnly, 4), gpuInstance("i-2", vpcOnly, 4, emulator.GPUFault{GPU: 0, ERDMAGbps: 10})}, 0.95},
	}
	for _, c := range cases {
		m := mpiScaling(c.ins, nil)
		if m.Error != "" || m.Nodes != len(c.ins) || !near(efficiencyOf(t, m), c.want) {
			t.Errorf("%s: %+v (efficiency %.4f), want %.4f", c.name, m, efficiencyOf(t, m), c.want)
		}
	}
}

// TestDCGMDiagLevel2: XID 79 fails pcie and memory, XID 64 the row-remap check, a degraded
// NVLink or eRDMA and an XID that breaks nothing dcgmi tests fail nothing.
func TestDCGMDiagLevel2(t *testing.T) {
	const typ = "ecs.ebmgn7ex.32xlarge"
	cases := []struct {
		fault  emulator.GPUFault
		failed string
	}{
		{emulator.GPUFault{GPU: 2, XID: 79}, "pcie,memory"},
		{emulator.GPUFault{GPU: 2, XID: 64}, "Page Retirement/Row Remap"},
		{emulator.GPUFault{GPU: 2, NVLinkGBs: 100}, ""},
		{emulator.GPUFault{GPU: 2, ERDMAGbps: 20}, ""},
		{emulator.GPUFault{GPU: 2, XID: 13}, ""},
	}
	for _, c := range cases {
		d := dcgmDiagLevel2(gpuInstance("i-1", typ, 8, c.fault))
		if got := strings.Join(d.Failed, ","); got != c.failed || (d.ExitCode != 0) != (c.failed != "") || d.Level != 2 {
			t.Errorf("%+v: %+v, want failed %q", c.fault, d, c.failed)
		}
	}
}

// TestGateScriptRefused: a script with the marker that lacks an assignment fails, naming it;
// one without the marker is not the gate's.
func TestGateScriptRefused(t *testing.T) {
	good := gateScriptFor("np-1", 8, "none", "r.example/ns", "i-1=n-1")
	if _, err := readGateScript(good); err != nil {
		t.Fatalf("the rendered script: %v", err)
	}
	for _, c := range []struct{ drop, says string }{
		{"gpus=8\n", "sets no gpus"},
		{"nodes='i-1=n-1'\n", "sets no nodes"},
		{"mpi=none\n", "sets no mpi"},
	} {
		if _, err := readGateScript(strings.Replace(good, c.drop, "", 1)); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("without %q: %v, want %q", c.drop, err, c.says)
		}
	}
	if _, err := readGateScript(strings.Replace(good, "nodes='i-1=n-1'", "nodes='i-1'", 1)); err == nil {
		t.Error("a nodes= entry without a node name was read")
	}
	a := New(func() emulator.View { return emulator.View{} }, newFakeKube(), t.Logf)
	if _, _, handled := a.runAcceptance("inv-1", "i-1", strings.Replace(good, acceptanceMarker, "# something else:", 1)); handled {
		t.Error("a script without the marker was handled as the gate's")
	}
}
