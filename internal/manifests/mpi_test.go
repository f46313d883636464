package manifests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

func mpiOpts(nodes, gpus int, erdma bool) (Options, MPIOptions) {
	return Options{Scenario: "molecular_dynamics", Nodes: nodes, GPUsPerNode: gpus, ERDMA: erdma},
		MPIOptions{Pools: []Pool{{Name: "md-gpu", Nodes: nodes, GPUsPerNode: gpus}},
			Teams: map[string]Team{"chem": {GPUs: nodes * gpus / 2}, "cfd": {GPUs: nodes * gpus / 4}}, JobTeam: "chem"}
}

func renderMPI(t *testing.T, o Options, m MPIOptions) MPIRender {
	t.Helper()
	r, err := RenderMPI(o, m)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mpiJobs decodes the rendered MPIJobs by name.
func mpiJobs(t *testing.T, r MPIRender) map[string]*mpiJob {
	t.Helper()
	out := map[string]*mpiJob{}
	for _, group := range [][]Document{r.MolecularDynamics, r.CFD, r.Horovod, r.Scaling} {
		n := 0
		for _, d := range group {
			if d.Kind != "MPIJob" {
				continue
			}
			var j mpiJob
			if err := yaml.UnmarshalStrict([]byte(d.YAML), &j); err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
			out[d.Name] = &j
			n++
		}
		if n != 1 {
			t.Fatalf("want one MPIJob per template, got %d in %v", n, group)
		}
	}
	return out
}

func launcherScript(t *testing.T, j *mpiJob) string {
	t.Helper()
	c := j.Spec.MPIReplicaSpecs["Launcher"].Template.Spec.Containers[0]
	if len(c.Command) != 3 || c.Command[0] != "/bin/bash" {
		t.Fatalf("%s: launcher command %q", j.Name, c.Command)
	}
	return c.Command[2]
}

var npRE = regexp.MustCompile(`mpirun .*?-np (\d+) -H (\S+)`)

// Every object decodes into its API: k8s.io/api types strictly, MPIJob and Kueue objects against
// their CRDs' schemas.
func TestMPIObjectsMatchTheirAPIs(t *testing.T) {
	schemas := crdSchemas(t)
	for _, erdma := range []bool{true, false} {
		r := renderMPI(t, Options{Scenario: "engineering_simulation", Nodes: 3, GPUsPerNode: 4, ERDMA: erdma}, MPIOptions{
			Pools: []Pool{{Name: "sim-a", Nodes: 3, GPUsPerNode: 4}, {Name: "sim-b", Nodes: 2, GPUsPerNode: 8}},
			Teams: map[string]Team{"cfd": {GPUs: 8}, "fea": {GPUs: 16, Pool: "sim-b", Namespace: "fea-team"}},
		})
		var all []Document
		for _, g := range [][]Document{r.Operator, r.Queues, r.MolecularDynamics, r.CFD, r.Horovod, r.Scaling} {
			all = append(all, g...)
		}
		kinds := map[string]int{}
		for _, d := range all {
			kinds[d.Kind]++
			var obj any
			switch d.APIVersion + " " + d.Kind {
			case "v1 Namespace":
				obj = &corev1.Namespace{}
			case "v1 ServiceAccount":
				obj = &corev1.ServiceAccount{}
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			case "rbac.authorization.k8s.io/v1 ClusterRole":
				obj = &rbacv1.ClusterRole{}
			case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
				obj = &rbacv1.ClusterRoleBinding{}
			case "rbac.authorization.k8s.io/v1 Role":
				obj = &rbacv1.Role{}
			case "rbac.authorization.k8s.io/v1 RoleBinding":
				obj = &rbacv1.RoleBinding{}
			case "apps/v1 Deployment":
				obj = &appsv1.Deployment{}
			default:
				if errs := validateCRD(schemas, d); len(errs) > 0 {
					t.Errorf("%s %s does not match its CRD:\n%s", d.Kind, d.Name, strings.Join(errs, "\n"))
				}
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(d.YAML), obj); err != nil {
				t.Errorf("%s %s: %v", d.Kind, d.Name, err)
			}
		}
		want := map[string]int{"MPIJob": 4, "ResourceFlavor": 2, "ClusterQueue": 2, "LocalQueue": 2, "Deployment": 1, "ClusterRole": 1}
		for k, n := range want {
			if kinds[k] != n {
				t.Errorf("erdma=%v: %d %s, want %d (%v)", erdma, kinds[k], k, n, kinds)
			}
		}
	}
}

// ranks x slots: every template has one worker per node and one slot per GPU, and mpirun starts
// one rank per GPU on exactly those workers.
func TestMPIRanksMatchPool(t *testing.T) {
	for _, c := range []struct{ nodes, gpus int }{{1, 8}, {2, 8}, {4, 8}, {3, 4}, {16, 1}} {
		o, m := mpiOpts(c.nodes, c.gpus, true)
		r := renderMPI(t, o, m)
		if r.Ranks != c.nodes*c.gpus || r.Workers != c.nodes || r.SlotsPerWorker != c.gpus {
			t.Errorf("%dx%d: ranks %d = workers %d x slots %d", c.nodes, c.gpus, r.Ranks, r.Workers, r.SlotsPerWorker)
		}
		for name, j := range mpiJobs(t, r) {
			w := j.Spec.MPIReplicaSpecs["Worker"]
			if got := int(*w.Replicas) * int(*j.Spec.SlotsPerWorker); got != c.nodes*c.gpus || int(*w.Replicas) != c.nodes {
				t.Errorf("%s %dx%d: %d workers x %d slots", name, c.nodes, c.gpus, *w.Replicas, *j.Spec.SlotsPerWorker)
			}
			if gpu := w.Template.Spec.Containers[0].Resources.Limits[GPUResource]; gpu.Value() != int64(c.gpus) {
				t.Errorf("%s: worker GPU limit %s, want %d", name, gpu.String(), c.gpus)
			}
			launcher := j.Spec.MPIReplicaSpecs["Launcher"].Template
			if l := launcher.Spec.Containers[0].Resources.Limits; len(l) != 0 {
				t.Errorf("%s: the launcher holds %v; it only runs mpirun", name, l)
			}
			// Workers spread one per node; the launcher must not count as one of them, or the
			// last worker has no node left.
			for _, term := range w.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
				if err != nil {
					t.Fatal(err)
				}
				if sel.Matches(labels.Set(launcher.Labels)) || !sel.Matches(labels.Set(w.Template.Labels)) {
					t.Errorf("%s: worker anti-affinity %v against launcher labels %v / worker labels %v", name, sel, launcher.Labels, w.Template.Labels)
				}
			}
			script := launcherScript(t, j)
			runs := npRE.FindAllStringSubmatch(script, -1)
			if len(runs) == 0 {
				t.Fatalf("%s: no mpirun in %s", name, script)
			}
			// The last mpirun is the job itself (CFD and the scaling job run something first).
			last := runs[len(runs)-1]
			hosts := strings.Split(last[2], ",")
			if last[1] != fmt.Sprint(c.nodes*c.gpus) || len(hosts) != c.nodes {
				t.Errorf("%s %dx%d: mpirun -np %s over %d hosts", name, c.nodes, c.gpus, last[1], len(hosts))
			}
			// OpenFOAM decomposes the case into exactly one subdomain per rank.
			if name == CFDJobName && !strings.Contains(script, fmt.Sprintf(`numberOfSubdomains %d;`, c.nodes*c.gpus)) {
				t.Errorf("%s: decomposition is not one subdomain per rank:\n%s", name, script)
			}
			for i, h := range hosts {
				if want := fmt.Sprintf("%s:%d", WorkerHost(name, "chem", i), c.gpus); h != want {
					t.Errorf("%s: host %d = %s, want %s", name, i, h, want)
				}
			}
		}
	}
}

// The gang: every MPIJob carries its team's queue label (a LocalQueue that exists in the job's
// namespace) and starts suspended for Kueue to admit whole; Kueue waits for all pods to be ready;
// pods tolerate the GPU taint, require the pool and carry the reaper's label.
func TestMPIGangAndQueueLabels(t *testing.T) {
	o, m := mpiOpts(2, 8, false)
	r := renderMPI(t, o, m)
	local := map[string]string{}
	var cfg KueueConfiguration
	for _, d := range r.Queues {
		switch d.Kind {
		case "LocalQueue":
			local[d.Namespace] = d.Name
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := yaml.Unmarshal([]byte(d.YAML), &cm); err != nil {
				t.Fatal(err)
			}
			if err := yaml.UnmarshalStrict([]byte(cm.Data["controller_manager_config.yaml"]), &cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cfg.WaitForPodsReady.Timeout == "" || !cfg.WaitForPodsReady.BlockAdmission {
		t.Errorf("Kueue must wait for pods ready with blockAdmission: %+v", cfg.WaitForPodsReady)
	}
	if !strings.Contains(strings.Join(cfg.Integrations["frameworks"], ","), "kubeflow.org/mpijob") {
		t.Errorf("Kueue must manage MPIJobs: %v", cfg.Integrations)
	}
	for name, j := range mpiJobs(t, r) {
		q := j.Labels[QueueNameLabel]
		if q == "" || local[j.Namespace] != q {
			t.Errorf("%s in %s: queue label %q, LocalQueues %v", name, j.Namespace, q, local)
		}
		if j.Spec.RunPolicy.Suspend == nil || !*j.Spec.RunPolicy.Suspend {
			t.Errorf("%s: not created suspended", name)
		}
		if j.Spec.RunPolicy.ActiveDeadlineSeconds == nil || *j.Spec.RunPolicy.ActiveDeadlineSeconds > int64(DefaultMaxRuntime.Seconds()) {
			t.Errorf("%s: activeDeadlineSeconds %v must end it by max_runtime", name, j.Spec.RunPolicy.ActiveDeadlineSeconds)
		}
		for role, rs := range j.Spec.MPIReplicaSpecs {
			pod := rs.Template
			if pod.Labels[ReapLabel] != "true" {
				t.Errorf("%s %s: no %s label", name, role, ReapLabel)
			}
			tol := pod.Spec.Tolerations
			if len(tol) != 1 || tol[0].Key != bootstrap.GPUTaintKey || tol[0].Operator != corev1.TolerationOpExists || tol[0].Effect != corev1.TaintEffectNoSchedule {
				t.Errorf("%s %s: tolerations %+v", name, role, tol)
			}
			terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			if len(terms) != 1 || terms[0].MatchExpressions[0].Key != PoolLabel || terms[0].MatchExpressions[0].Values[0] != "md-gpu" {
				t.Errorf("%s %s: node affinity %+v", name, role, terms)
			}
		}
	}
}

// The OpenMPI transport follows the network: UCX over the eRDMA device with eRDMA (and the
// workers get the verbs devices), the TCP BTL without.
func TestMPITransportFollowsERDMA(t *testing.T) {
	for _, erdma := range []bool{true, false} {
		o, m := mpiOpts(2, 8, erdma)
		for name, j := range mpiJobs(t, renderMPI(t, o, m)) {
			script := launcherScript(t, j)
			ucx := strings.Contains(script, "--mca pml ucx") && strings.Contains(script, "UCX_NET_DEVICES=erdma_0:1")
			tcp := strings.Contains(script, "--mca btl tcp,vader,self") && strings.Contains(script, "--mca pml ob1")
			if ucx != erdma || tcp == erdma {
				t.Errorf("%s erdma=%v: ucx=%v tcp=%v in\n%s", name, erdma, ucx, tcp, script)
			}
			sc := j.Spec.MPIReplicaSpecs["Worker"].Template.Spec.Containers[0].SecurityContext
			if privileged := sc != nil && sc.Privileged != nil && *sc.Privileged; privileged != erdma {
				t.Errorf("%s erdma=%v: worker privileged=%v", name, erdma, privileged)
			}
			if strings.Contains(script, "NCCL_NET") != erdma {
				t.Errorf("%s erdma=%v: NCCL_NET=IB forwarded only with eRDMA", name, erdma)
			}
		}
	}
}

// The scaling job's script, run with a stand-in mpirun that prints LAMMPS's Performance line:
// the efficiency it reports, and that it fails only below a given threshold.
func TestScalingEfficiencyScript(t *testing.T) {
	testtools.Require(t, "bash", "bash") // fails, never skips, when bash is missing
	bin := t.TempDir()
	// 1 node (8 ranks): 10 timesteps/s; 4 nodes (32 ranks): 34 timesteps/s, so 85%.
	fake := `#!/bin/sh
np=0; prev=""
for a in "$@"; do [ "$prev" = "-np" ] && np=$a; prev=$a; done
if [ "$np" = 8 ]; then r=10; else r=34; fi
echo "Loop time of 1.0 on $np procs"
echo "Performance: 1234.5 tau/day, $r timesteps/s, 99.1 Matom-step/s"
`
	if err := os.WriteFile(filepath.Join(bin, "mpirun"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		nodes     int
		threshold float64
		wantOK    bool
		want      string
	}{
		{4, 0, true, "parallel efficiency 85.0% on 4 nodes vs 1 (target 90%)"},
		{4, 90, false, "FAIL: below the threshold 90%"},
		{4, 80, true, "parallel efficiency 85.0%"},
		{1, 95, true, "nothing to compare"},
	} {
		o, m := mpiOpts(c.nodes, 8, false)
		m.MinParallelEfficiencyPercent = c.threshold
		var script string
		for _, j := range mpiJobs(t, renderMPI(t, o, m)) {
			if j.Name == ScalingJobName {
				script = launcherScript(t, j)
			}
		}
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.wantOK || !strings.Contains(string(out), c.want) {
			t.Errorf("nodes=%d threshold=%g: err=%v, want ok=%v and %q in\n%s", c.nodes, c.threshold, err, c.wantOK, c.want, out)
		}
	}
}

func TestMPIOptionErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*MPIOptions)
		field string
	}{
		{"no pools", func(m *MPIOptions) { m.Pools = nil }, "mpi.pools"},
		{"pool twice", func(m *MPIOptions) { m.Pools = append(m.Pools, m.Pools[0]) }, "mpi.pools"},
		{"pool without nodes", func(m *MPIOptions) { m.Pools[0].Nodes = 0 }, `mpi.pools["md-gpu"].node_count`},
		{"job team unknown", func(m *MPIOptions) { m.JobTeam = "bio" }, "mpi.job_team"},
		{"job pool unknown", func(m *MPIOptions) { m.JobPool = "other" }, "mpi.job_pool"},
		{"threshold over 100", func(m *MPIOptions) { m.MinParallelEfficiencyPercent = 120 }, "mpi.min_parallel_efficiency_percent"},
		{"bad image", func(m *MPIOptions) { m.Images.LAMMPS = "LAMMPS latest" }, "mpi.images.lammps"},
	} {
		o, m := mpiOpts(2, 8, true)
		c.edit(&m)
		_, err := RenderMPI(o, m)
		var ie *planerr.Error
		if !errors.As(err, &ie) || ie.Path != c.field {
			t.Errorf("%s: got %v, want a *planerr.Error on %s", c.name, err, c.field)
		}
	}
}

// Every launcher script runs under bash and hands mpirun the argv meant: a stand-in mpirun
// records each call's arguments, and the nested commands arrive as one argument each.
func TestMPILauncherScriptsRun(t *testing.T) {
	testtools.Require(t, "bash", "bash") // fails, never skips, when bash is missing
	bin := t.TempDir()
	fake := `#!/bin/bash
for a in "$@"; do printf '%s\0' "$a"; done >>"$ARGV_LOG"
printf '\n' >>"$ARGV_LOG"
echo "Performance: 1.0 tau/day, 10 timesteps/s, 1.0 Matom-step/s"
`
	if err := os.WriteFile(filepath.Join(bin, "mpirun"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, erdma := range []bool{true, false} {
		o, m := mpiOpts(3, 4, erdma)
		for name, j := range mpiJobs(t, renderMPI(t, o, m)) {
			log := filepath.Join(t.TempDir(), "argv")
			cmd := exec.Command("bash", "-c", launcherScript(t, j))
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "ARGV_LOG="+log)
			cmd.Dir = t.TempDir()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s erdma=%v: %v\n%s", name, erdma, err, out)
				continue
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			calls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			last := strings.Split(strings.TrimSuffix(calls[len(calls)-1], "\x00"), "\x00")
			if i := slices.Index(last, "-np"); i < 0 || last[i+1] != "12" {
				t.Errorf("%s: the job's mpirun is not -np 12: %q", name, last)
			}
			if i := slices.Index(last, "-x"); i < 0 {
				t.Errorf("%s: no -x in %q", name, last)
			}
			if want := "UCX_NET_DEVICES=erdma_0:1"; slices.Contains(last, want) != erdma {
				t.Errorf("%s erdma=%v: %s as one argument: %v", name, erdma, want, slices.Contains(last, want))
			}
			switch name {
			case CFDJobName:
				prep := strings.Split(strings.TrimSuffix(calls[0], "\x00"), "\x00")
				script := prep[len(prep)-1]
				if prep[len(prep)-3] != "bash" || prep[len(prep)-2] != "-c" || !strings.HasPrefix(script, `. "$FOAM_BASHRC" && rm -rf /tmp/case`) ||
					!strings.HasSuffix(script, "decomposePar -force >log.decomposePar") || !strings.Contains(script, "numberOfSubdomains 12;") {
					t.Errorf("%s: the per-node preparation is not one bash -c argument: %q", name, prep)
				}
			case MolecularDynamicsJobName, ScalingJobName:
				if !slices.Equal(last[len(last)-2:], []string{"-in", "/opt/lammps/in.lj"}) {
					t.Errorf("%s: LAMMPS input not last: %q", name, last)
				}
			}
		}
	}
}
