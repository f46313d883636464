package nodeagent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/gpuhealthagent"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

// gpuInstance is a Running instance of typ with gpus GPUs and the faults.
func gpuInstance(id, typ string, gpus int, faults ...emulator.GPUFault) *emulator.InstanceView {
	for i := range faults {
		faults[i].InstanceID = id
	}
	return &emulator.InstanceView{ID: id, Type: typ, GPUs: gpus, Status: "Running", GPUFaults: faults}
}

// TestModelAllReduce: the modeled all_reduce_perf of healthy nodes reaches internal/health's
// floor for their type and count; a degraded NVLink or eRDMA takes it below; a GPU fallen off the
// bus fails the run; a degraded NVLink on a PCIe type changes nothing.
func TestModelAllReduce(t *testing.T) {
	const a100x4, a100x8rdma, l20x8 = "ecs.gn7e-c16g1.16xlarge", "ecs.ebmgn7ex.32xlarge", "ecs.gn8is-8x.32xlarge"
	cases := []struct {
		name       string
		ins        []*emulator.InstanceView
		busbw      float64 // 0: the run fails
		passes     bool
		bottleneck string
	}{
		{"healthy A100 node: NVLink 300 GB/s each way", []*emulator.InstanceView{gpuInstance("i-1", a100x4, 4)}, 240, true, "nvlink inside i-1"},
		{"one GPU's NVLink at half", []*emulator.InstanceView{gpuInstance("i-1", a100x4, 4, emulator.GPUFault{GPU: 2, NVLinkGBs: 300})}, 120, false, "nvlink inside i-1"},
		{"NVLink one link short of twelve", []*emulator.InstanceView{gpuInstance("i-1", a100x4, 4, emulator.GPUFault{GPU: 0, NVLinkGBs: 550})}, 220, true, "nvlink inside i-1"},
		{"two healthy eRDMA nodes: 160 Gbit/s", []*emulator.InstanceView{gpuInstance("i-1", a100x8rdma, 8), gpuInstance("i-2", a100x8rdma, 8)}, 16, true, "erdma of i-1"},
		{"one node's eRDMA at 40 Gbit/s", []*emulator.InstanceView{gpuInstance("i-1", a100x8rdma, 8), gpuInstance("i-2", a100x8rdma, 8, emulator.GPUFault{GPU: 5, ERDMAGbps: 40})}, 4, false, "erdma of i-2"},
		{"eRDMA fault on a lone node changes nothing", []*emulator.InstanceView{gpuInstance("i-1", a100x8rdma, 8, emulator.GPUFault{GPU: 5, ERDMAGbps: 40})}, 240, true, "nvlink inside i-1"},
		{"PCIe node ignores an NVLink figure", []*emulator.InstanceView{gpuInstance("i-1", l20x8, 8, emulator.GPUFault{GPU: 1, NVLinkGBs: 10})}, 25.2, true, "pcie inside i-1"},
		{"XID 79 fails the run", []*emulator.InstanceView{gpuInstance("i-1", a100x4, 4, emulator.GPUFault{GPU: 3, XID: 79})}, 0, false, ""},
		{"XID 48 does not stop the run", []*emulator.InstanceView{gpuInstance("i-1", a100x4, 4, emulator.GPUFault{GPU: 3, XID: 48})}, 240, true, "nvlink inside i-1"},
		{"one GPU", []*emulator.InstanceView{gpuInstance("i-1", "ecs.gn7e-c16g1.4xlarge", 1)}, 0, false, ""},
	}
	for _, c := range cases {
		run := modelAllReduce(c.ins)
		floor, err := health.AllReduceFloor(c.ins[0].Type, len(c.ins))
		passes := err == nil && run.Error == "" && floor.Passes(run.BusBWGBs)
		if !near(run.BusBWGBs, c.busbw) || passes != c.passes || run.Bottleneck != c.bottleneck || (c.busbw == 0) != (run.Error != "") {
			t.Errorf("%s: %+v (floor %.2f, passes %v); want busbw %.2f via %q, passes %v", c.name, run, floor.GBs, passes, c.busbw, c.bottleneck, c.passes)
		}
		if run.Error == "" {
			if !near(health.AllReduceBusBandwidth(run.AlgBWGBs, run.Ranks), run.BusBWGBs) {
				t.Errorf("%s: algbw %.3f does not give busbw %.3f over %d ranks", c.name, run.AlgBWGBs, run.BusBWGBs, run.Ranks)
			}
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestDCGMText: dcgm-exporter's default counters, one sample per GPU, the XID on the GPU it hit,
// the row-remap failure gauge set by XID 64 only.
func TestDCGMText(t *testing.T) {
	in := gpuInstance("i-1", "ecs.gn7e-c16g1.16xlarge", 4, emulator.GPUFault{GPU: 1, XID: 64}, emulator.GPUFault{GPU: 3, XID: 79})
	got := dcgmText(in, "gpu-0")
	want := map[string]string{
		"DCGM_FI_DEV_XID_ERRORS":        "0 64 0 79",
		"DCGM_FI_DEV_ROW_REMAP_FAILURE": "0 1 0 0",
	}
	for name, values := range want {
		mustContain(t, "exposition", got, "# TYPE "+name+" gauge\n")
		var seen []string
		for _, line := range strings.Split(got, "\n") {
			if strings.HasPrefix(line, name+"{") {
				if !strings.Contains(line, `device="nvidia`+fmt.Sprint(len(seen))+`"`) || !strings.Contains(line, `Hostname="gpu-0"`) ||
					!strings.Contains(line, `modelName="NVIDIA A100-80GB"`) {
					t.Errorf("labels of %q", line)
				}
				seen = append(seen, line[strings.LastIndex(line, " ")+1:])
			}
		}
		if strings.Join(seen, " ") != values {
			t.Errorf("%s per GPU = %v, want %s", name, seen, values)
		}
	}
	// The product's health agent reads this exposition as it reads dcgm-exporter's: GPU 1's row
	// remap failure and GPU 3's XID 79 are the two GPUs it takes out of service.
	readings, err := gpuhealthagent.ParseDCGM(got)
	if err != nil {
		t.Fatalf("the health agent cannot read the exposition: %v", err)
	}
	var out []string
	for _, f := range gpuhealthagent.Assess(readings) {
		out = append(out, fmt.Sprintf("%s:%d:%s", f.GPU, f.XID, f.Action))
	}
	if strings.Join(out, " ") != "1:64:replace 3:79:replace" {
		t.Errorf("the health agent finds %v, want GPU 1 (XID 64) and GPU 3 (XID 79) to replace", out)
	}
	if gpuUUID("i-1", 0) == gpuUUID("i-1", 1) || gpuUUID("i-1", 0) == gpuUUID("i-2", 0) || len(gpuUUID("i-1", 0)) != len("GPU-")+36 {
		t.Errorf("UUIDs %s %s", gpuUUID("i-1", 0), gpuUUID("i-1", 1))
	}
}

// TestGPUFaultsThroughTheEmulator: faults injected through POST /_emulator/gpu_faults show on the
// faulty node only: XID 79 in its dcgm-exporter metrics on that GPU, a degraded NVLink in its
// validation run's busbw, below internal/health's floor while the healthy node's stays above;
// the Node objects carry no verdict (the product's health agent sets that); a GPU reset clears it.
func TestGPUFaultsThroughTheEmulator(t *testing.T) {
	ca := testCAs(t)[0]
	s := startCloud(t, true)
	cp := s.run(t, "ecs.g7.xlarge", "cp-0", renderDoc(t, s.behind(firstControlPlane(ca))))
	s.backends(t, cp)
	const typ = "ecs.gn7e-c16g1.16xlarge" // 4 x A100 80GB over NVLink
	w1 := s.run(t, typ, "gpu-0", renderDoc(t, s.behind(gpuWorker(ca))))
	w2 := s.run(t, typ, "gpu-1", renderDoc(t, s.behind(gpuWorker(ca))))
	kube := newFakeKube()
	a := s.startAgent(t, kube)
	s.srv.HandleAdmin(DCGMMetricsPath, a.DCGMMetrics())
	s.srv.HandleAdmin(NCCLTestsPath, a.NCCLTests())
	s.settle(t, a, []string{cp, w1, w2}, registered)
	healthyNode := fmt.Sprint(kube.nodes["gpu-0"].Status.Conditions)

	get := func(path, query string) (int, string) {
		t.Helper()
		resp, err := http.Get(s.url + path + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	busbw := func(id string) NCCLRun {
		t.Helper()
		code, body := get(NCCLTestsPath, "instance_id="+id)
		var run NCCLRun
		if err := json.Unmarshal([]byte(body), &run); code != http.StatusOK || err != nil {
			t.Fatalf("GET %s %s: %d %s %v", NCCLTestsPath, id, code, body, err)
		}
		return run
	}
	floor, err := health.AllReduceFloor(typ, 1)
	if err != nil {
		t.Fatal(err)
	}

	s.postGPUFault(t, `{"instance_id":"`+w1+`","gpu":2,"xid":79}`)
	s.postGPUFault(t, `{"instance_id":"`+w2+`","gpu":1,"nvlink_gbs":200}`)
	_, metrics := get(DCGMMetricsPath, "instance_id="+w1)
	mustContain(t, "gpu-0's metrics", metrics, `DCGM_FI_DEV_XID_ERRORS{gpu="2",UUID="`+gpuUUID(w1, 2)+`",device="nvidia2",modelName="NVIDIA A100-80GB",Hostname="gpu-0"} 79`)
	if strings.Count(metrics, "DCGM_FI_DEV_XID_ERRORS{") != 4 || strings.Count(metrics, `} 79`) != 1 {
		t.Errorf("gpu-0's metrics carry XID 79 other than on GPU 2:\n%s", metrics)
	}
	if _, other := get(DCGMMetricsPath, "instance_id="+w2); strings.Contains(other, "} 79") {
		t.Errorf("gpu-1's metrics carry gpu-0's XID:\n%s", other)
	}
	if run := busbw(w1); run.Error == "" || !strings.Contains(run.Error, "XID 79") {
		t.Errorf("gpu-0's validation run with a GPU off the bus: %+v", run)
	}
	if run := busbw(w2); run.Error != "" || floor.Passes(run.BusBWGBs) {
		t.Errorf("gpu-1's busbw with NVLink at 200 GB/s: %+v, floor %.1f: want below", run, floor.GBs)
	}
	if got := fmt.Sprint(kube.nodes["gpu-0"].Status.Conditions); got != healthyNode {
		t.Errorf("the agent set the faulty node's conditions: %s, was %s", got, healthyNode)
	}

	// GPU resets clear both; every node then passes.
	for _, q := range []string{"instance_id=" + w1 + "&gpu=2", "instance_id=" + w2} {
		req, _ := http.NewRequest(http.MethodDelete, s.url+emulator.GPUFaultsPath+"?"+q, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE %s: %v %v", q, resp, err)
		}
		resp.Body.Close()
	}
	for _, id := range []string{w1, w2} {
		if run := busbw(id); run.Error != "" || !floor.Passes(run.BusBWGBs) {
			t.Errorf("%s after the reset: %+v, floor %.1f", id, run, floor.GBs)
		}
	}
	if _, metrics := get(DCGMMetricsPath, "instance_id="+w1); strings.Contains(metrics, "} 79") {
		t.Errorf("XID 79 after the reset:\n%s", metrics)
	}
	two := busbw(w1 + "&instance_id=" + w2)
	if two.Ranks != 8 || !reflect.DeepEqual(two.InstanceIDs, []string{w1, w2}) || !strings.HasPrefix(two.Bottleneck, health.PathVPC) {
		t.Errorf("two nodes without RDMA: %+v", two)
	}

	for _, c := range []struct{ path, query, says string }{
		{DCGMMetricsPath, "", "name the instance"},
		{DCGMMetricsPath, "instance_id=i-nope", "not a registered node"},
		{DCGMMetricsPath, "instance_id=" + cp, "has no GPU"},
		{NCCLTestsPath, "instance_id=" + w1 + "&instance_id=i-nope", "not a registered node"},
	} {
		if code, body := get(c.path, c.query); code < 400 || !strings.Contains(body, c.says) {
			t.Errorf("GET %s?%s: %d %q, want an error saying %q", c.path, c.query, code, body, c.says)
		}
	}
}

// postGPUFault POSTs a fault to the emulator's GPUFaultsPath and fails the test unless it is set.
func (s *cloudScenario) postGPUFault(t *testing.T, body string) {
	t.Helper()
	resp, err := http.Post(s.url+emulator.GPUFaultsPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s %s", body, resp.Status, b)
	}
}
