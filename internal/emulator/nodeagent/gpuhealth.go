package nodeagent

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

// The GPUs' health as the node's own tools report it (issue #33). The emulator holds the faults
// injected into an instance's GPUs (POST /_emulator/gpu_faults, InstanceView.GPUFaults); the
// agent plays the hardware and what NVIDIA's tools on the node would show of it, never the
// product's judgement of it: the condition and the taint that take a GPU out of service are the
// product's health agent's to set, from these reports, by internal/health's thresholds. So a
// fault changes nothing on the Node object; it shows in two places:
//
//   - DCGMMetricsPath: what dcgm-exporter on the node serves, in its Prometheus text, for the
//     default counters a fault touches (DCGM_FI_DEV_XID_ERRORS, the last XID; and
//     DCGM_FI_DEV_ROW_REMAP_FAILURE, set by XID 64), with the help text and type of dcgm-exporter's
//     default counters file (urlDCGMCounters). A degraded link shows in none of its default
//     counters (DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counts traffic, not capacity), which is why the
//     gate runs a validation job;
//   - NCCLTestsPath: what that validation job, nccl-tests' all_reduce_perf over the nodes'
//     GPUs, would print: algbw and busbw by nccl-tests' definitions (health.URLNCCLTestsPerformance)
//     from the slowest path of the run, degraded where a fault degrades it.

// Paths the agent answers on beside NodesPath (see the emulator guide).
const (
	DCGMMetricsPath = "/_emulator/dcgm_metrics" // ?instance_id=ID
	NCCLTestsPath   = "/_emulator/nccl_tests"   // ?instance_id=ID[&instance_id=ID...]
)

// urlDCGMCounters, dcgm-exporter's default counters file (the fields it exports, their types and
// help text), is https://github.com/NVIDIA/dcgm-exporter/blob/main/etc/default-counters.csv.

// xidFallenOffTheBus is XID 79: the GPU no longer answers on PCIe, so CUDA cannot open it and a
// job on it fails (health.URLXIDErrors); xidRowRemapFailure is XID 64, which dcgm-exporter's
// DCGM_FI_DEV_ROW_REMAP_FAILURE reports (health.URLMemoryErrors).
const (
	xidFallenOffTheBus = 79
	xidRowRemapFailure = 64
)

// ncclAchieved is the fraction of a path's per-direction peak the modeled all_reduce_perf
// reaches on healthy hardware at a large message size: an estimate of this model, not a
// measured or vendor figure (NCCL loses some of the link to protocol and synchronisation).
// It sits above health.FloorEfficiency so that a healthy node passes the gate and a node whose
// bottleneck fell by more than an eighth does not.
const ncclAchieved = 0.8

// ncclBytes is the message size the modeled run reports, all_reduce_perf -e 8G: large enough
// that bandwidth, not latency, sets the time.
const ncclBytes = 8 << 30

// DCGMMetrics answers DCGMMetricsPath for a registered node's instance.
func (a *Agent) DCGMMetrics() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ins, ok := a.gpuNodes(w, r, 1)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(dcgmText(ins[0].in, ins[0].node)))
	})
}

// NCCLTests answers NCCLTestsPath for the registered nodes' instances named.
func (a *Agent) NCCLTests() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ins, ok := a.gpuNodes(w, r, 0)
		if !ok {
			return
		}
		views := make([]*emulator.InstanceView, len(ins))
		for i := range ins {
			views[i] = ins[i].in
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(modelAllReduce(views))
	})
}

type gpuNode struct {
	in   *emulator.InstanceView
	node string
}

// gpuNodes reads the instance_id parameters (exactly want of them, or at least one with want 0)
// and finds each as a registered node with GPUs, answering the error itself when one is not.
func (a *Agent) gpuNodes(w http.ResponseWriter, r *http.Request, want int) ([]gpuNode, bool) {
	if r.Method != http.MethodGet {
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return nil, false
	}
	ids := r.URL.Query()["instance_id"]
	if len(ids) == 0 || (want > 0 && len(ids) != want) {
		http.Error(w, fmt.Sprintf("%s?instance_id=ID: name the instance", r.URL.Path), http.StatusBadRequest)
		return nil, false
	}
	a.mu.Lock()
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = a.registered[id]
	}
	a.mu.Unlock()
	v := a.view()
	out := make([]gpuNode, 0, len(ids))
	for i, id := range ids {
		j := slices.IndexFunc(v.Instances, func(in emulator.InstanceView) bool { return in.ID == id })
		switch {
		case names[i] == "" || j < 0:
			http.Error(w, "instance "+id+" is not a registered node: nothing runs on it to report (GET "+emulator.NodesPath+" says why)", http.StatusNotFound)
			return nil, false
		case v.Instances[j].GPUs == 0:
			http.Error(w, "instance "+id+" ("+v.Instances[j].Type+") has no GPU", http.StatusNotFound)
			return nil, false
		}
		out = append(out, gpuNode{in: &v.Instances[j], node: names[i]})
	}
	return out, true
}

// dcgmText is dcgm-exporter's exposition for the node's GPUs: one sample per GPU and counter,
// labelled as dcgm-exporter labels them (gpu, UUID, device, modelName, Hostname). A GPU that
// fell off the bus (XID 79) is shown with its XID: the exporter keeps the last value it read.
func dcgmText(in *emulator.InstanceView, node string) string {
	faults := map[int]emulator.GPUFault{}
	for _, f := range in.GPUFaults {
		faults[f.GPU] = f
	}
	model := in.Type
	if t, ok := catalog.LookupInstanceType(in.Type); ok && t.GPU != "" {
		model = "NVIDIA " + t.GPU
	}
	var b strings.Builder
	counter := func(name, typ, help string, value func(f emulator.GPUFault) int) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for g := range in.GPUs {
			fmt.Fprintf(&b, "%s{gpu=\"%d\",UUID=\"%s\",device=\"nvidia%d\",modelName=\"%s\",Hostname=\"%s\"} %d\n",
				name, g, gpuUUID(in.ID, g), g, model, node, value(faults[g]))
		}
	}
	counter("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", func(f emulator.GPUFault) int { return f.XID })
	counter("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", func(f emulator.GPUFault) int {
		if f.XID == xidRowRemapFailure {
			return 1
		}
		return 0
	})
	return b.String()
}

// gpuUUID is a stable stand-in for the UUID nvidia-smi shows (GPU-8-4-4-4-12 hex digits).
func gpuUUID(instanceID string, gpu int) string {
	h := fnv.New128a()
	_, _ = fmt.Fprintf(h, "%s/%d", instanceID, gpu) // a hash's Write never fails
	x := fmt.Sprintf("%x", h.Sum(nil))
	return "GPU-" + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// NCCLRun is what the modeled all_reduce_perf reports over the nodes' GPUs (one rank a GPU).
type NCCLRun struct {
	Test        string   `json:"test"` // all_reduce_perf
	InstanceIDs []string `json:"instance_ids"`
	Ranks       int      `json:"ranks"`
	Bytes       int64    `json:"bytes"`
	AlgBWGBs    float64  `json:"algbw_gbs,omitempty"`
	BusBWGBs    float64  `json:"busbw_gbs,omitempty"`
	// Bottleneck is the path that set busbw: its kind and where it runs slowest.
	Bottleneck string `json:"bottleneck,omitempty"`
	// Error is why the run fails, as the job would print it; the bandwidths are then empty.
	Error string `json:"error,omitempty"`
}

// modelAllReduce models all_reduce_perf over every GPU of ins: the per-direction peak of the run's
// slowest path (inside each node with more than one GPU: its links, the slowest GPU's under a
// degraded NVLink; between nodes, when there are several: each node's network, degraded eRDMA
// counting) times ncclAchieved is busbw; algbw follows from nccl-tests' all-reduce factor.
func modelAllReduce(ins []*emulator.InstanceView) NCCLRun {
	run := NCCLRun{Test: "all_reduce_perf", Bytes: ncclBytes}
	best := math.Inf(1)
	for _, in := range ins {
		run.InstanceIDs = append(run.InstanceIDs, in.ID)
		run.Ranks += in.GPUs
		for _, f := range in.GPUFaults {
			if f.XID == xidFallenOffTheBus && run.Error == "" {
				run.Error = fmt.Sprintf("instance %s GPU %d has fallen off the bus (XID %d): CUDA cannot open it, the job fails", in.ID, f.GPU, f.XID)
			}
		}
		p, err := health.PathsOf(in.Type)
		if err != nil {
			run.Error = fmt.Sprintf("instance %s: %v", in.ID, err)
			continue
		}
		intra, inter := p.Intra, p.Inter
		for _, f := range in.GPUFaults {
			if f.NVLinkGBs > 0 && intra.Kind == health.PathNVLink {
				intra.PeakGBs = min(intra.PeakGBs, f.NVLinkGBs/2) // NVIDIA's figure adds both directions
			}
			if f.ERDMAGbps > 0 && inter.Kind == health.PathERDMA {
				inter.PeakGBs = min(inter.PeakGBs, f.ERDMAGbps/8)
			}
		}
		if in.GPUs > 1 && intra.PeakGBs < best {
			best, run.Bottleneck = intra.PeakGBs, intra.Kind+" inside "+in.ID
		}
		if len(ins) > 1 && inter.PeakGBs <= 0 {
			run.Error = fmt.Sprintf("instance %s: %s states no bandwidth between nodes", in.ID, in.Type)
			continue
		}
		if len(ins) > 1 && inter.PeakGBs < best {
			best, run.Bottleneck = inter.PeakGBs, inter.Kind+" of "+in.ID
		}
	}
	switch {
	case run.Error != "":
		run.Bottleneck = ""
		return run
	case run.Ranks < 2 || math.IsInf(best, 1):
		run.Error = "one GPU: all_reduce_perf moves nothing over a link"
		return run
	}
	run.BusBWGBs = best * ncclAchieved
	run.AlgBWGBs = run.BusBWGBs / (2 * float64(run.Ranks-1) / float64(run.Ranks))
	return run
}
