package nodeagent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acceptance"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// The GPU pool's acceptance gate (issue #33), played: the provider sends a control-plane node
// a script (Cloud Assistant) that runs checks on the pool's new nodes as Kubernetes Jobs and
// prints one report line (acceptance.ReportPrefix + JSON of acceptance.Report). The agent reads
// only the script's marker line and its assignments; the rest of it is the provider's. What
// the real run would measure, from which fact:
//
//   - kubectl reads /etc/kubernetes/admin.conf, which kubeadm writes on control-plane nodes only
//     (kubeadm init and join --control-plane; a worker's join writes kubelet.conf:
//     https://kubernetes.io/docs/setup/best-practices/certificates/#configure-certificates-for-user-accounts).
//     With KUBECONFIG naming a file that does not exist, client-go ignores it ("Empty filenames
//     or other missing files are ignored", tools/clientcmd/loader.go, client-go v0.35.2) and
//     kubectl falls back to localhost:8080, where nothing listens;
//   - each Job's pod pulls its image on the node it runs on, through that node's containerd
//     (containerd.go) and from that node's region (region.go); a pull that fails leaves the pod
//     in ErrImagePull, then ImagePullBackOff
//     (https://kubernetes.io/docs/concepts/containers/images/#imagepullbackoff);
//   - dcgmi diag -r 2 (the "medium" suite) runs the deployment checks, the "pcie" test
//     (Integration) and the "memory" test (Hardware): NvidiaValidationSuite::FillTestVectors and
//     the plugin names of nvvs/include/PluginStrings.h in https://github.com/NVIDIA/DCGM, the run
//     levels of https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html.
//     A GPU fallen off the bus (XID 79) cannot be opened, so both CUDA tests fail on it; a row
//     remap failure (XID 64) fails the deployment check "Page Retirement/Row Remap"
//     (DCGM_FR_ROW_REMAP_FAILURE) and DCGM skips the later tests of that GPU for it. A degraded
//     NVLink fails neither: it is slow, not broken, and what the gate's nccl run measures
//     (gpuhealth.go). dcgmi exits non-zero when a test fails (the model: 1; the report reads
//     zero against non-zero only);
//   - all_reduce_perf inside each node and across the pool: modelAllReduce (gpuhealth.go);
//   - the FP64 MPI strong-scaling run (mpi=hpcg): mpiScaling below, this model's estimate.

// acceptanceMarker starts the script's second line; a script without it is not the gate's.
const acceptanceMarker = "# gpucluster-acceptance:"

var (
	acceptanceMarkerRE   = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(acceptanceMarker))
	adminKubeconfigRE    = regexp.MustCompile(`(?m)^export KUBECONFIG=/etc/kubernetes/admin\.conf$`)
	acceptancePoolRE     = regexp.MustCompile(`(?m)^pool=(\S+)$`)
	acceptanceGPUsRE     = regexp.MustCompile(`(?m)^gpus=([0-9]+)$`)
	acceptanceMPIRE      = regexp.MustCompile(`(?m)^mpi=(hpcg|none)$`)
	acceptanceNodesRE    = regexp.MustCompile(`(?m)^nodes='([^']*)'$`)
	acceptanceRegistryRE = regexp.MustCompile(`(?m)^image_registry=(\S*)$`)
)

// kubectlNoConfig is what kubectl prints when it finds no kubeconfig.
const kubectlNoConfig = "The connection to the server localhost:8080 was refused - did you specify the right host or port?\n"

// gateScript is what the agent reads of the gate's script.
type gateScript struct {
	pool     string
	gpus     int
	mpi      bool
	pairs    []gatePair
	registry string
	// adminConf: the script points kubectl at admin.conf.
	adminConf bool
}

// gatePair is one node to check: its instance and the Node name the script gives it.
type gatePair struct{ instanceID, node string }

// readGateScript reads the gate's assignments; an error names the line the script lacks.
func readGateScript(script string) (gateScript, error) {
	s := gateScript{adminConf: adminKubeconfigRE.MatchString(script)}
	find := func(re *regexp.Regexp, line string) (string, error) {
		m := re.FindStringSubmatch(script)
		if m == nil {
			return "", fmt.Errorf("the acceptance script sets no %s (a line %s)", strings.SplitN(line, "=", 2)[0], line)
		}
		return m[1], nil
	}
	var err error
	if s.pool, err = find(acceptancePoolRE, "pool=<node pool id>"); err != nil {
		return s, err
	}
	gpus, err := find(acceptanceGPUsRE, "gpus=<GPUs a node>")
	if err != nil {
		return s, err
	}
	s.gpus, _ = strconv.Atoi(gpus) // the expression admits digits only
	mpi, err := find(acceptanceMPIRE, "mpi=hpcg or mpi=none")
	if err != nil {
		return s, err
	}
	s.mpi = mpi == "hpcg"
	nodes, err := find(acceptanceNodesRE, "nodes='<instance id>=<node name> ...'")
	if err != nil {
		return s, err
	}
	for _, f := range strings.Fields(nodes) {
		id, node, ok := strings.Cut(f, "=")
		if !ok || id == "" || node == "" {
			return s, fmt.Errorf("the acceptance script's nodes= holds %q, not <instance id>=<node name>", f)
		}
		s.pairs = append(s.pairs, gatePair{instanceID: id, node: node})
	}
	if s.registry, err = find(acceptanceRegistryRE, "image_registry=<registry host/namespace>"); err != nil {
		return s, err
	}
	return s, nil
}

// gateImages are the images the gate's Jobs run, as the registry names them (the public
// registries when it is ""): nccl-tests' all_reduce_perf, PyTorch for the pool's torchrun, and
// NVIDIA's HPC benchmarks for the MPI run.
func (s gateScript) gateImages() []string {
	refs := []string{images.RefIn(images.NCCLTests, s.registry), images.RefIn(images.PyTorch, s.registry)}
	if s.mpi {
		refs = append(refs, images.RefIn(images.HPCG, s.registry))
	}
	return refs
}

// gateNodeWait is how long the script waits for each node to be Ready (its kubectl wait
// --timeout=900s) before it runs the checks; a node that has not joined by then fails them.
const gateNodeWait = 900 * time.Second

// gateAPIWait is how long the script waits for the API server on its node (180 tries of
// kubectl get --raw=/readyz, 5 s apart) before it gives up with exit 1.
const gateAPIWait = 15 * time.Minute

// acceptanceOnRefused plays the gate's script on an instance the agent refused as a node
// (kubeadm init or join failed there, so no API server answers on it): after the script's wait
// for /readyz it exits 1. A refusal can be passing (a joining node before the API answers), so
// the answer comes only once the script's wait, on the emulator's clock, is over. handled is
// false for another script, or while the wait lasts.
func (a *Agent) acceptanceOnRefused(id, script string) (exitCode int, output string, handled bool) {
	if !acceptanceMarkerRE.MatchString(script) || !a.refused[id] {
		return 0, "", false
	}
	if a.waited(id+"/api", gateAPIWait) {
		return 1, "gpucluster-acceptance: the cluster's API server did not answer on this node in 15 minutes:\n" +
			"The connection to the server " + id + " was refused - did you specify the right host or port?\n", true
	}
	return 0, "", false
}

// waited says whether wait has passed, on the emulator's clock, since the agent first asked for
// key. Caller holds a.mu.
func (a *Agent) waited(key string, wait time.Duration) bool {
	if a.gateWaits == nil {
		a.gateWaits = map[string]time.Time{}
	}
	since, ok := a.gateWaits[key]
	if !ok {
		a.gateWaits[key], since = a.now, a.now
	}
	return !a.now.Before(since.Add(wait))
}

// runAcceptance plays the gate's script, sent as invocation invokeID, on instance id: its exit
// code and output, the report line among it. handled is false for a script without the gate's
// marker, and while a node it checks has not joined and the script's wait for it lasts (the
// invocation then stays Running, as the script does). Caller holds a.mu.
func (a *Agent) runAcceptance(invokeID, id, script string) (exitCode int, output string, handled bool) {
	if !acceptanceMarkerRE.MatchString(script) {
		return 0, "", false
	}
	s, err := readGateScript(script)
	if err != nil {
		return 2, err.Error() + "\n", true
	}
	for _, p := range s.pairs {
		if _, joined := a.registered[p.instanceID]; !joined && !a.waited(invokeID, gateNodeWait) {
			return 0, "", false
		}
	}
	if !s.adminConf || !a.member(id) || a.stopped[id] {
		return 1, kubectlNoConfig + "(kubectl reads /etc/kubernetes/admin.conf, which kubeadm writes on control-plane nodes only: " +
			"run the script on a running control-plane node of the cluster)\n", true
	}
	v := a.view()
	byID := make(map[string]*emulator.InstanceView, len(v.Instances))
	for i := range v.Instances {
		byID[v.Instances[i].ID] = &v.Instances[i]
	}
	net := newNetwork(v)
	var out strings.Builder
	report := acceptance.Report{Pool: s.pool, Nodes: make([]acceptance.NodeResult, 0, len(s.pairs))}
	var ran []*emulator.InstanceView // the nodes whose Jobs ran
	var missing []string             // why the others' did not
	for _, p := range s.pairs {
		r := acceptance.NodeResult{InstanceID: p.instanceID, Node: p.node, DCGM: acceptance.DCGM{Level: 2}}
		in := byID[p.instanceID]
		if r.Error = a.gateNodeProblem(net, in, p, s); r.Error != "" {
			fmt.Fprintf(&out, "node %s (%s): %s\n", p.node, p.instanceID, r.Error)
			missing = append(missing, p.node)
			report.Nodes = append(report.Nodes, r)
			continue
		}
		r.DCGM = dcgmDiagLevel2(in)
		if in.GPUs > 1 {
			r.AllReduce = reportedAllReduce(modelAllReduce([]*emulator.InstanceView{in}))
		}
		fmt.Fprintf(&out, "node %s (%s): dcgmi diag -r 2 exit %d%s; all_reduce_perf %s\n", p.node, p.instanceID, r.DCGM.ExitCode,
			failedSuffix(r.DCGM.Failed), describeAllReduce(r.AllReduce))
		ran = append(ran, in)
		report.Nodes = append(report.Nodes, r)
	}
	if len(s.pairs) > 1 {
		report.AllReduce = poolAllReduce(ran, missing)
		fmt.Fprintf(&out, "pool all-reduce over %d nodes: %s\n", len(s.pairs), describeAllReduce(report.AllReduce))
		if s.mpi {
			report.MPI = mpiScaling(ran, missing)
			fmt.Fprintf(&out, "hpcg strong scaling 1 -> %d nodes: %s\n", report.MPI.Nodes, describeMPI(report.MPI))
		}
	}
	body, err := json.Marshal(report)
	if err != nil { // a Report of strings and numbers always encodes
		return 1, err.Error() + "\n", true
	}
	a.logf("nodeagent: %s ran the acceptance gate of pool %s on %d nodes", id, s.pool, len(s.pairs))
	return 0, out.String() + acceptance.ReportPrefix + string(body) + "\n", true
}

// gateNodeProblem is why the node's Jobs do not run: it is not a registered Node of that name,
// it is not Ready, it has fewer GPUs than the Jobs ask for, or their images cannot be pulled on
// it. "" when they run. Caller holds a.mu.
func (a *Agent) gateNodeProblem(net *network, in *emulator.InstanceView, p gatePair, s gateScript) string {
	notFound := fmt.Sprintf("Error from server (NotFound): nodes %q not found", p.node)
	name, registered := a.registered[p.instanceID]
	switch {
	case in == nil || !registered:
		return notFound + " (instance " + p.instanceID + " has no registered node)"
	case name != p.node:
		return fmt.Sprintf("%s (instance %s registered as node %s)", notFound, p.instanceID, name)
	case a.stopped[p.instanceID] || in.Status != "Running":
		return fmt.Sprintf("node %s is NotReady (instance %s): its kubelet does not run, so no pod starts on it", p.node, in.Status)
	case a.notReady[p.instanceID] != "":
		return fmt.Sprintf("node %s is NotReady: %s", p.node, a.notReady[p.instanceID])
	case in.GPUs < s.gpus:
		return fmt.Sprintf("the Jobs' pods stay Pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu (node %s is %s with %d GPUs, the Jobs ask for %d)",
			p.node, in.Type, in.GPUs, s.gpus)
	}
	route := net.internetRoute(in) != ""
	for _, ref := range s.gateImages() {
		if why := unpullable(in.Region, a.plans[in.ID].plan.Containerd, ref, route); why != "" {
			return fmt.Sprintf("the Job's pod on node %s does not start: ErrImagePull, then ImagePullBackOff, pulling %s: %s. "+
				"Point image_registry at a registry the nodes reach in %s and copy the images into it", p.node, ref, why, in.Region)
		}
	}
	return ""
}

// DCGM's test names as dcgmi diag's JSON output gives them (see the top of this file).
const (
	dcgmTestPCIe     = "pcie"
	dcgmTestMemory   = "memory"
	dcgmTestRowRemap = "Page Retirement/Row Remap"
)

// dcgmDiagLevel2 is dcgmi diag -r 2 on the instance's GPUs, from their faults.
func dcgmDiagLevel2(in *emulator.InstanceView) acceptance.DCGM {
	d := acceptance.DCGM{Level: 2}
	var detail []string
	for _, f := range in.GPUFaults {
		switch f.XID {
		case xidFallenOffTheBus:
			d.Failed = appendNew(d.Failed, dcgmTestPCIe, dcgmTestMemory)
			detail = append(detail, fmt.Sprintf("GPU %d has fallen off the bus (XID %d): CUDA cannot open it", f.GPU, f.XID))
		case xidRowRemapFailure:
			d.Failed = appendNew(d.Failed, dcgmTestRowRemap)
			detail = append(detail, fmt.Sprintf("GPU %d: row remapping failure (XID %d); DCGM skips its later tests", f.GPU, f.XID))
		}
	}
	if len(d.Failed) > 0 {
		d.ExitCode, d.Detail = 1, strings.Join(detail, "; ")
	}
	return d
}

// appendNew appends the names list lacks.
func appendNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}

// reportedAllReduce is a modeled all_reduce_perf run as the report holds it.
func reportedAllReduce(run NCCLRun) *acceptance.AllReduce {
	return &acceptance.AllReduce{Ranks: run.Ranks, Bytes: run.Bytes, AlgBWGBs: run.AlgBWGBs, BusBWGBs: run.BusBWGBs, Error: run.Error}
}

// poolAllReduce is the all-reduce over every node's GPUs; it fails when a node's ranks never
// start (the launcher waits for every rank).
func poolAllReduce(ran []*emulator.InstanceView, missing []string) *acceptance.AllReduce {
	if len(missing) > 0 {
		return &acceptance.AllReduce{Bytes: ncclBytes, Error: "the ranks on node(s) " + strings.Join(missing, ", ") + " never started: the run cannot complete"}
	}
	return reportedAllReduce(modelAllReduce(ran))
}

// The MPI strong-scaling run, modeled: one problem, first on one node, then on all of them.
// Its figures are this model's estimates, not a vendor's: mpiHealthyEfficiency is the
// efficiency of a healthy pool; a node whose eRDMA runs at a fraction f of its peak makes the
// run's communication take 1/f as long, so with comm = 1/mpiHealthyEfficiency - 1 the
// efficiency is 1/(1 + comm/f). No FP64 rate is reported: HPCG reaches a small fraction of the
// GPUs' FP64 peak, and the catalog states no HPCG figure to model it from.
const (
	mpiHealthyEfficiency = 0.95
	mpiBaseSeconds       = 600.0 // the problem on one node
)

// mpiScaling is the run over the nodes.
func mpiScaling(ran []*emulator.InstanceView, missing []string) *acceptance.MPIScaling {
	m := &acceptance.MPIScaling{Benchmark: "hpcg", BaseNodes: 1, Nodes: len(ran) + len(missing)}
	if len(missing) > 0 {
		m.Error = "mpirun cannot start its ranks on node(s) " + strings.Join(missing, ", ")
		return m
	}
	fraction := 1.0
	for _, in := range ran {
		for _, f := range in.GPUFaults {
			if f.XID == xidFallenOffTheBus {
				m.Error = fmt.Sprintf("instance %s GPU %d has fallen off the bus (XID %d): its rank cannot open the GPU, mpirun aborts", in.ID, f.GPU, f.XID)
				return m
			}
		}
		fraction = min(fraction, erdmaFraction(in))
	}
	e := 1 / (1 + (1/mpiHealthyEfficiency-1)/fraction)
	m.BaseSeconds = mpiBaseSeconds
	m.Seconds = mpiBaseSeconds / (float64(m.Nodes) * e)
	return m
}

// erdmaFraction is the share of its eRDMA peak the instance's network runs at (1 when healthy
// or when it has no eRDMA).
func erdmaFraction(in *emulator.InstanceView) float64 {
	p, err := health.PathsOf(in.Type)
	if err != nil || p.Inter.Kind != health.PathERDMA || p.Inter.PeakGBs <= 0 {
		return 1
	}
	f := 1.0
	for _, g := range in.GPUFaults {
		if g.ERDMAGbps > 0 {
			f = min(f, g.ERDMAGbps/8/p.Inter.PeakGBs)
		}
	}
	return f
}

func failedSuffix(failed []string) string {
	if len(failed) == 0 {
		return ""
	}
	return " (failed: " + strings.Join(failed, ", ") + ")"
}

func describeAllReduce(r *acceptance.AllReduce) string {
	switch {
	case r == nil:
		return "not run (one GPU)"
	case r.Error != "":
		return "failed: " + r.Error
	}
	return fmt.Sprintf("%d ranks, busbw %.2f GB/s", r.Ranks, r.BusBWGBs)
}

func describeMPI(m *acceptance.MPIScaling) string {
	if m.Error != "" {
		return "failed: " + m.Error
	}
	return fmt.Sprintf("%.1f s on 1 node, %.1f s on %d", m.BaseSeconds, m.Seconds, m.Nodes)
}
