package manifests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

type poolAllReduceObjects struct {
	cm  *corev1.ConfigMap
	svc *corev1.Service
	job *batchv1.Job
	env map[string]string
}

// renderPoolAllReduce renders the validation alone, strictly decodes it and checks that Render
// carries the same documents.
func renderPoolAllReduce(t *testing.T, o Options) poolAllReduceObjects {
	t.Helper()
	docs, err := RenderPoolAllReduce(o)
	if err != nil {
		t.Fatal(err)
	}
	all, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(Join(all), Join(docs)) {
		t.Fatal("Render does not carry RenderPoolAllReduce's documents in order")
	}
	objs := decodeAll(t, Join(docs))
	if len(objs) != 3 {
		t.Fatalf("%d objects, want ConfigMap, Service, Job", len(objs))
	}
	var kinds []string
	for _, d := range docs {
		kinds = append(kinds, d.Kind)
	}
	if strings.Join(kinds, ",") != "ConfigMap,Service,Job" {
		t.Fatalf("apply order %v, want the ConfigMap and Service before the Job", kinds)
	}
	p := poolAllReduceObjects{
		cm:  objs["ConfigMap/"+PoolAllReduceName].(*corev1.ConfigMap),
		svc: objs["Service/"+PoolAllReduceName].(*corev1.Service),
		job: objs["Job/"+PoolAllReduceName].(*batchv1.Job),
		env: map[string]string{},
	}
	for _, e := range p.job.Spec.Template.Spec.Containers[0].Env {
		if _, dup := p.env[e.Name]; dup {
			t.Fatalf("env %s set twice", e.Name)
		}
		p.env[e.Name] = e.Value
	}
	return p
}

func TestPoolAllReduce(t *testing.T) {
	o := opts(catalog.ScenarioAITraining)
	o.MinCrossNodeBusBandwidthGBs = 9.5
	p := renderPoolAllReduce(t, o)
	js, spec := p.job.Spec, p.job.Spec.Template.Spec
	c := spec.Containers[0]

	if *js.CompletionMode != batchv1.IndexedCompletion || *js.Completions != 4 || *js.Parallelism != 4 || *js.BackoffLimit != 0 {
		t.Fatalf("job spec completionMode %v completions %d parallelism %d backoffLimit %d, want Indexed 4/4 and no retry",
			*js.CompletionMode, *js.Completions, *js.Parallelism, *js.BackoffLimit)
	}
	if p.job.Namespace != DefaultWorkloadNamespace || p.svc.Namespace != DefaultWorkloadNamespace || p.cm.Namespace != DefaultWorkloadNamespace {
		t.Fatal("objects not in the workload namespace")
	}

	// DNS: the Job controller sets each pod's hostname to <job>-<index> when subdomain is set; the
	// headless Service of that name then publishes <job>-<index>.<service>.
	if spec.Subdomain != p.svc.Name || p.svc.Spec.ClusterIP != corev1.ClusterIPNone || !p.svc.Spec.PublishNotReadyAddresses {
		t.Fatalf("subdomain %q, service %s clusterIP %q publishNotReady %v: want a headless service named by the subdomain",
			spec.Subdomain, p.svc.Name, p.svc.Spec.ClusterIP, p.svc.Spec.PublishNotReadyAddresses)
	}
	if !labels.SelectorFromSet(p.svc.Spec.Selector).Matches(labels.Set(p.job.Spec.Template.Labels)) {
		t.Fatalf("service selector %v does not select the pods %v", p.svc.Spec.Selector, p.job.Spec.Template.Labels)
	}
	for i := range 4 {
		if errs := validation.IsDNS1123Label(fmt.Sprintf("%s-%d", p.job.Name, i)); len(errs) > 0 {
			t.Fatalf("pod hostname: %v", errs)
		}
	}
	if want := PoolAllReduceName + "-0." + PoolAllReduceName; p.env["MASTER_ADDR"] != want {
		t.Fatalf("MASTER_ADDR %q, want %q", p.env["MASTER_ADDR"], want)
	}
	if !spec.HostNetwork || spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Fatalf("hostNetwork %v dnsPolicy %q, want the node network with cluster DNS", spec.HostNetwork, spec.DNSPolicy)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != PoolAllReducePort || c.Ports[0].HostPort != PoolAllReducePort {
		t.Fatalf("ports %+v", c.Ports)
	}

	// One pod per GPU node with all its GPUs.
	if q := c.Resources.Limits[GPUResource]; q.Value() != 8 {
		t.Fatalf("GPU limit %v, want 8", q)
	}
	aff := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if aff.TopologyKey != "kubernetes.io/hostname" || !labels.SelectorFromSet(aff.LabelSelector.MatchLabels).Matches(labels.Set(p.job.Spec.Template.Labels)) {
		t.Fatalf("anti-affinity %+v does not keep the job's own pods apart", aff)
	}

	// The launcher: torchrun, rank from the completion index, the script from the ConfigMap.
	cmd := strings.Join(c.Command, " ")
	for _, want := range []string{"--nnodes=4", "--nproc-per-node=8", `--node-rank="$JOB_COMPLETION_INDEX"`, fmt.Sprintf("--master-port=%d", PoolAllReducePort), "/opt/all-reduce/all_reduce.py"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command lacks %s:\n%s", want, cmd)
		}
	}
	if p.cm.Data["all_reduce.py"] != AllReduceScript {
		t.Fatal("ConfigMap does not hold the script")
	}
	mounted := false
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == p.cm.Name {
			for _, m := range c.VolumeMounts {
				mounted = mounted || (m.Name == v.Name && m.MountPath == "/opt/all-reduce")
			}
		}
	}
	if !mounted {
		t.Fatal("script ConfigMap not mounted at /opt/all-reduce")
	}
	if c.Image != DefaultImages().PyTorch {
		t.Fatalf("image %s", c.Image)
	}

	// eRDMA: netplan's NCCL variables, IB forced so a broken fabric fails, device access.
	for k, v := range map[string]string{"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "erdma_0", "NCCL_SOCKET_IFNAME": "eth0", "NCCL_IB_GID_INDEX": "1",
		"NCCL_NET": "IB", "NCCL_DEBUG": "INFO", "MIN_BUS_BANDWIDTH_GBS": "9.5", "NODES": "4"} {
		if p.env[k] != v {
			t.Errorf("env %s = %q, want %q", k, p.env[k], v)
		}
	}
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		t.Fatal("the eRDMA run is not privileged: NCCL cannot open /dev/infiniband without an RDMA device plugin")
	}
}

func TestPoolAllReduceWithoutERDMA(t *testing.T) {
	o := opts(catalog.ScenarioMolecularDynamics)
	o.ERDMA, o.Nodes, o.GPUsPerNode = false, 2, 4
	o.Images.PyTorch = "registry.example.cn/mirror/pytorch:24.03-py3"
	p := renderPoolAllReduce(t, o)
	c := p.job.Spec.Template.Spec.Containers[0]
	if p.env["NCCL_IB_DISABLE"] != "1" {
		t.Fatalf("env %v, want NCCL_IB_DISABLE=1", p.env)
	}
	if _, ok := p.env["NCCL_NET"]; ok {
		t.Fatal("NCCL_NET forced without eRDMA")
	}
	if c.SecurityContext != nil {
		t.Fatalf("security context %+v: TCP sockets need no privilege", c.SecurityContext)
	}
	if p.env["MIN_BUS_BANDWIDTH_GBS"] != "0" || *p.job.Spec.Completions != 2 || c.Image != o.Images.PyTorch {
		t.Fatalf("env %v completions %d image %s", p.env, *p.job.Spec.Completions, c.Image)
	}
	if q := c.Resources.Limits[GPUResource]; q.Value() != 4 {
		t.Fatalf("GPU limit %v", q)
	}
}

func TestPoolAllReduceUserNCCLEnvWins(t *testing.T) {
	o := opts(catalog.ScenarioAITraining)
	o.NCCLEnv = map[string]string{"NCCL_NET": "Socket", "NCCL_DEBUG": "WARN"}
	p := renderPoolAllReduce(t, o)
	if p.env["NCCL_NET"] != "Socket" || p.env["NCCL_DEBUG"] != "WARN" {
		t.Fatalf("env %v, want the user's NCCL_NET and NCCL_DEBUG", p.env)
	}
}

// TestAllReduceScript compiles the script and checks its arithmetic (torch is imported in main
// only), and checks the pod's shell command parses.
func TestAllReduceScript(t *testing.T) {
	py := testtools.Require(t, "python3", "python3")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "all_reduce.py"), []byte(AllReduceScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-m", "py_compile", filepath.Join(dir, "all_reduce.py")).CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	check := `
import all_reduce as a
assert a.sizes(1 << 20, 1 << 30) == [1 << i for i in range(20, 31)], a.sizes(1 << 20, 1 << 30)
assert a.sizes(6, 16) == [4, 8, 16]
algbw, busbw = a.bandwidths(1e9, 0.5, 32)
assert abs(algbw - 2.0) < 1e-9 and abs(busbw - 2.0 * 2 * 31 / 32) < 1e-9, (algbw, busbw)
assert a.bandwidths(1e9, 1.0, 1) == (1.0, 0.0)
assert a.verdict(5.0, 0)[0] and a.verdict(10.0, 9.5)[0]
ok, msg = a.verdict(9.0, 9.5)
assert not ok and "below the minimum 9.50" in msg, msg
`
	cmd := exec.Command(py, "-c", check)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script arithmetic: %v\n%s", err, out)
	}
	bash := testtools.Require(t, "bash", "bash")
	p := renderPoolAllReduce(t, opts(catalog.ScenarioAITraining))
	if out, err := exec.Command(bash, "-n", "-c", p.job.Spec.Template.Spec.Containers[0].Command[2]).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
}
