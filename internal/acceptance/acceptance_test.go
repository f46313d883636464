package acceptance

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

var twoNodes = []Node{{"i-aaa", "node-a"}, {"i-bbb", "node-b"}}

// TestScriptIsShell: the rendered script parses as bash, carries the lines the node agent and a
// reader look for, and refuses values a script line cannot take.
func TestScriptIsShell(t *testing.T) {
	s, err := Script(Options{PoolID: "np-0123abcd", GPUs: 8, Nodes: twoNodes, MPI: true, ImageRegistry: "registry-vpc.cn-beijing.aliyuncs.com/gpucluster",
		PoolAllReduceYAML: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{MarkerLine, "pool=np-0123abcd", "gpus=8", "mpi=hpcg", "nodes='i-aaa=node-a i-bbb=node-b'",
		"image_registry=registry-vpc.cn-beijing.aliyuncs.com/gpucluster", "export KUBECONFIG=/etc/kubernetes/admin.conf"} {
		if !strings.Contains(s, "\n"+line) {
			t.Errorf("the script has no line %q", line)
		}
	}
	images := regexp.MustCompile(`(?m)^\s*image: (\S+)$`).FindAllStringSubmatch(s, -1)
	if len(images) < 3 {
		t.Errorf("the script names %d images; want the DCGM, nccl-tests and HPCG ones", len(images))
	}
	for _, m := range images {
		if !strings.HasPrefix(m[1], "registry-vpc.cn-beijing.aliyuncs.com/gpucluster/") {
			t.Errorf("image %s is not from the cluster's registry", m[1])
		}
	}
	path := filepath.Join(t.TempDir(), "gate.sh")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	for _, bad := range []Options{
		{PoolID: "np-1; rm -rf /", GPUs: 8, Nodes: twoNodes},
		{PoolID: "np-1", GPUs: 8, Nodes: []Node{{"i-aaa", "Node A"}}},
		{PoolID: "np-1", GPUs: 0, Nodes: twoNodes},
	} {
		if _, err := Script(bad); err == nil {
			t.Errorf("Script(%+v) rendered; want an error", bad)
		}
	}
}

// TestAssemblerReadsTheToolsOutput runs the script's python3 report assembler on what dcgmi,
// all_reduce_perf, the torchrun all-reduce and HPCG print, and reads its line back with Parse.
func TestAssemblerReadsTheToolsOutput(t *testing.T) {
	work := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("i-aaa.dcgm", "dcgm-exit: 0\n"+`{"DCGM GPU Diagnostic":{"test_categories":[{"category":"Integration","tests":[{"name":"PCIe","results":[{"gpu_id":"0","status":"Pass"}]}]}]}}`+"\n")
	write("i-bbb.dcgm", "dcgm-exit: 226\n"+`{"DCGM GPU Diagnostic":{"test_categories":[{"category":"Hardware","tests":[{"name":"GPU Memory","results":[{"gpu_id":"3","status":"Fail","warnings":[{"warning":"row remap failure"}]}]}]}]}}`+"\n")
	nccl := "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" +
		"  1073741824     268435456     float     sum      -1   5000.0  214.75  375.81      0   5000.0  214.75  375.81      0\n" +
		"  8589934592    2147483648     float     sum      -1  38000.0  226.05  395.59      0  38000.0  226.05  395.59      0\n" +
		"# Avg bus bandwidth    : 385.7\n"
	write("i-aaa.nccl", nccl)
	write("i-bbb.nccl", strings.ReplaceAll(nccl, "395.59", "20.10"))
	write("pool.nccl", "# all-reduce float32 sum: 16 ranks (2 nodes x 8 GPUs)\n    1073741824     90000.0        11.93        22.37\n# Avg bus bandwidth    : 22.37\n")
	write("hpcg-1.log", "Final Summary::HPCG result is VALID with a GFLOP/s rating of=1000.0\n")
	write("hpcg-2.log", "Final Summary::HPCG result is VALID with a GFLOP/s rating of=1900.0\n")
	cmd := exec.Command("python3", "-c", reportAssembler)
	cmd.Env = append(os.Environ(), "POOL=np-1", "GPUS=8", "MPI=hpcg", "NODES=i-aaa=node-a i-bbb=node-b", "WORK="+work)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the assembler: %v\n%s", err, out)
	}
	r, err := Parse("kubectl noise\n" + string(out))
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Nodes[0], r.Nodes[1]
	if a.DCGM.ExitCode != 0 || len(a.DCGM.Failed) != 0 || a.AllReduce == nil || a.AllReduce.BusBWGBs != 395.59 || a.AllReduce.Bytes != 8589934592 {
		t.Errorf("node a: %+v %+v, want DCGM passed and busbw 395.59 at 8 GiB", a.DCGM, a.AllReduce)
	}
	if b.DCGM.ExitCode != 226 || strings.Join(b.DCGM.Failed, ",") != "GPU Memory" || b.AllReduce.BusBWGBs != 20.10 {
		t.Errorf("node b: %+v %+v, want exit 226, GPU Memory failed, busbw 20.10", b.DCGM, b.AllReduce)
	}
	if r.AllReduce == nil || r.AllReduce.BusBWGBs != 22.37 || r.AllReduce.Ranks != 16 {
		t.Errorf("pool all-reduce %+v, want busbw 22.37 over 16 ranks", r.AllReduce)
	}
	if r.MPI == nil || r.MPI.BaseSeconds != 1 || r.MPI.Seconds != 1000.0/1900 {
		t.Errorf("MPI %+v, want 1 s per TFLOP on one node, 1000/1900 on two", r.MPI)
	}
}

// TestJudge: the floors and the target decide, and a failure names the node, the check and the
// figure.
func TestJudge(t *testing.T) {
	const typ = "ecs.gn7e-c16g1.32xlarge" // 8 A100 80 GB with NVLink
	if _, ok := catalog.LookupInstanceType(typ); !ok {
		t.Fatalf("%s is not in the catalog", typ)
	}
	node, err := health.AllReduceFloor(typ, 1)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := health.AllReduceFloor(typ, 2)
	if err != nil {
		t.Fatal(err)
	}
	healthy := func(id, name string) NodeResult {
		return NodeResult{InstanceID: id, Node: name, DCGM: DCGM{Level: 2}, AllReduce: &AllReduce{Ranks: 8, BusBWGBs: node.GBs * 1.1}}
	}
	r := Report{Pool: "np-1", Nodes: []NodeResult{healthy("i-aaa", "node-a"), healthy("i-bbb", "node-b")},
		AllReduce: &AllReduce{Ranks: 16, BusBWGBs: pool.GBs * 1.05},
		MPI:       &MPIScaling{BaseNodes: 1, BaseSeconds: 100, Nodes: 2, Seconds: 52}}
	v, err := Judge(r, typ, catalog.ScenarioMolecularDynamics, twoNodes)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Passed() {
		t.Fatalf("a healthy pool failed: %+v", v)
	}

	r.Nodes[1].AllReduce.BusBWGBs = node.GBs * 0.5 // NVLink at half
	r.MPI.Seconds = 60                             // 83% efficiency
	v, err = Judge(r, typ, catalog.ScenarioMolecularDynamics, append(twoNodes, Node{"i-ccc", "node-c"}))
	if err != nil {
		t.Fatal(err)
	}
	failed := v.FailedNodes()
	if len(failed) != 2 || failed[0].InstanceID != "i-bbb" || !strings.Contains(failed[0].Failure, "under the floor") || failed[1].Failure != "no result in the acceptance report" {
		t.Errorf("failed nodes %+v, want i-bbb under the floor and i-ccc without a result", failed)
	}
	if len(v.Pool.Failures) != 1 || !strings.Contains(v.Pool.Failures[0], "parallel efficiency 83%, under the molecular_dynamics target of 90%") {
		t.Errorf("pool failures %q, want the 83%% efficiency alone", v.Pool.Failures)
	}

	r.Nodes[0].DCGM = DCGM{Level: 2, ExitCode: 226, Failed: []string{"PCIe"}}
	v, _ = Judge(r, typ, catalog.ScenarioAITraining, twoNodes[:1])
	if f := v.FailedNodes(); len(f) != 1 || !strings.Contains(f[0].Failure, "dcgmi diag -r 2) failed: PCIe (exit 226)") {
		t.Errorf("a DCGM failure: %+v", f)
	}
}
