package controllertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// Two teams share one pool of two 8-GPU nodes, 8 GPUs guaranteed each, in one cohort (what
// internal/manifests renders for mpi.teams = {chem = 8, cfd = 8}). Kueue and the MPI Operator are
// the real programs; the scheduler, the Job controller and the garbage collector are the real
// Kubernetes ones; kwok plays the kubelets.
//
//  1. chem's job of one worker (8 GPUs, within its quota) is admitted: its Workload reserves quota
//     and is Admitted, Kueue unsuspends the MPIJob and gives its pods the pool's flavor, the
//     operator creates the worker and then the launcher, the scheduler binds them to the pool's
//     GPU nodes, and the Workload reaches PodsReady.
//  2. cfd's job of two workers (16 GPUs: its 8 and 8 more it could only borrow from chem, who uses
//     them) is held: its Workload gets no quota, Kueue says why, and the MPIJob stays suspended
//     without pods.
//  3. chem's job ends (deleted): cfd's job is admitted on its quota plus chem's lent 8 GPUs and
//     runs on both nodes. chem submits a job within its quota again: Kueue preempts cfd's
//     borrowing job (reclaimWithinCohort), the MPIJob is suspended and its pods removed, and chem's
//     job runs.
func TestTeamQueues_realKueueAndMPIOperator(t *testing.T) {
	binDir, err := offlinekube.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	requireControllers(t, binDir)
	c := offlinekube.StartT(t, offlinekube.Options{BinDir: binDir})
	workDir := c.WorkDir() // kept, with the control plane's logs, when the test fails

	pool := manifests.Pool{Name: "gpu-a", Nodes: 2, GPUsPerNode: 8}
	teams := map[string]manifests.Team{"chem": {GPUs: 8}, "cfd": {GPUs: 8}}
	opts := manifests.Options{Scenario: "molecular_dynamics", Nodes: pool.Nodes, GPUsPerNode: pool.GPUsPerNode}
	render := func(team string) manifests.MPIRender {
		r, err := manifests.RenderMPI(opts,
			manifests.MPIOptions{Pools: []manifests.Pool{pool}, Teams: teams, JobTeam: team})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	chem, cfd := render("chem"), render("cfd")
	if !reflect.DeepEqual(chem.Queues, cfd.Queues) {
		t.Fatal("the queues differ with the job team; they should be the same objects")
	}

	installCRDs(t, dyn(c), binDir)
	addGPUNodes(t, c, pool)
	if _, err := c.Client().CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manifests.KueueNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reaperNamespace, reaperCron := applyReaper(t, c, opts) // first: the queues hold the reaper's team list
	for _, d := range chem.Queues {
		apply(t, c, d)
	}
	// The idle reaper covers every team's namespace (and no other).
	assertReaperCoversTeams(t, c, reaperNamespace, chem.Teams)
	kueue := startKueue(t, c, binDir, workDir, chem.Queues)
	operator := startMPIOperator(t, c, binDir, workDir, chem.Operator)
	alive := func() error {
		if err := kueue.exited(); err != nil {
			return err
		}
		return operator.exited()
	}
	for team := range teams {
		waitFor(t, "ClusterQueue "+team+" Active", func(ctx context.Context) (bool, error) {
			cq, err := dyn(c).Resource(cqGVR).Get(ctx, team, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return hasCondition(cq, "Active", "True"), alive()
		})
	}

	// 1. Within quota: admitted and placed on the pool's GPU nodes.
	chemA := submit(t, c, chem, "chem-a", 1)
	waitRunning(t, c, pool, "chem", "chem-a", 1, alive)
	assertHostfile(t, c, chemA, 1)
	// The reaper, run as its CronJob would, visits chem's namespace and finds chem-a's launcher
	// Job (the MPI Operator's launcher is a batch Job; the workers, owned by the MPIJob, it skips).
	if out := runReaper(t, c, reaperNamespace, reaperCron, true); !strings.Contains(out, "reclaim job chem-a-launcher in chem") {
		t.Errorf("the reaper did not find chem-a's launcher in namespace chem:\n%s", out)
	}

	// 2. Beyond quota, with the GPUs it would borrow in use: held.
	cfdBig := submit(t, c, cfd, "cfd-big", 2)
	var heldMessage string
	waitFor(t, "cfd-big's Workload pending for quota", func(ctx context.Context) (bool, error) {
		wl, err := workloadOf(ctx, c, "cfd", "cfd-big")
		if wl == nil || err != nil {
			return false, err
		}
		status, _, msg := condition(wl, "QuotaReserved")
		heldMessage = msg
		return status == "False" && strings.Contains(msg, "insufficient"), alive()
	})
	t.Logf("cfd-big held: %s", heldMessage)
	assertHeld(t, c, "cfd", "cfd-big")
	if wl, err := workloadOf(t.Context(), c, "chem", "chem-a"); err != nil || wl == nil || !hasCondition(wl, "Admitted", "True") {
		t.Fatalf("chem-a's Workload is no longer admitted while cfd-big waits (%v): %v", err, wl)
	}

	// 3. chem's job ends: cfd borrows chem's unused GPUs; chem takes them back by preemption.
	if err := dyn(c).Resource(mpiJobGVR).Namespace("chem").Delete(t.Context(), "chem-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, c, pool, "cfd", "cfd-big", 2, alive)
	assertHostfile(t, c, cfdBig, 2)
	submit(t, c, chem, "chem-b", 1)
	waitFor(t, "cfd-big preempted", func(ctx context.Context) (bool, error) {
		wl, err := workloadOf(ctx, c, "cfd", "cfd-big")
		if wl == nil || err != nil {
			return false, err
		}
		status, reason, msg := condition(wl, "Preempted")
		if status != "True" || reason != "InCohortReclamation" {
			// Why not yet, for the failure message: chem-b's admission state.
			state := "no Workload yet"
			if chemB, err := workloadOf(ctx, c, "chem", "chem-b"); err == nil && chemB != nil {
				_, _, state = condition(chemB, "QuotaReserved")
			}
			return false, errors.Join(alive(), fmt.Errorf("cfd-big Preempted=%q (%s); chem-b: %s", status, reason, state))
		}
		t.Logf("cfd-big's Workload: Preempted (%s): %s", reason, msg)
		return true, alive()
	})
	waitRunning(t, c, pool, "chem", "chem-b", 1, alive)
	waitFor(t, "cfd-big pending again, suspended, without pods", func(ctx context.Context) (bool, error) {
		wl, err := workloadOf(ctx, c, "cfd", "cfd-big")
		if wl == nil || err != nil {
			return false, err
		}
		job, err := dyn(c).Resource(mpiJobGVR).Namespace("cfd").Get(ctx, "cfd-big", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := jobPods(ctx, c, "cfd", "cfd-big")
		return hasCondition(wl, "QuotaReserved", "False") && suspended(job) && len(pods) == 0, err
	})

	// The reaper, for real this time: its DELETE of chem-b's launcher Job is accepted in chem.
	if out := runReaper(t, c, reaperNamespace, reaperCron, false); !strings.Contains(out, "reclaim job chem-b-launcher in chem: running 0.0 h, limit 0.0 h\n") {
		t.Errorf("the reaper did not reclaim chem-b's launcher in namespace chem:\n%s", out)
	}
}

// submit creates the ConfigMap and MPIJob of teamJob and returns the MPIJob as submitted.
func submit(t *testing.T, c *offlinekube.Cluster, r manifests.MPIRender, name string, workers int) *unstructured.Unstructured {
	t.Helper()
	cm, job := teamJob(t, r, name, workers)
	create(t, c, cm)
	create(t, c, job.DeepCopy())
	return job
}

// waitRunning waits until namespace/name is admitted and running: its Workload Admitted and
// PodsReady, the MPIJob unsuspended, one Running launcher and workers Running workers, each on a
// node of the pool, the workers on different nodes and with the pool flavor's node selector that
// Kueue adds at admission. The launcher gets no flavor (it asks for no GPU, and the queues count
// GPUs only, so Kueue assigns its pod set none): the rendered pool affinity keeps it in the pool.
func waitRunning(t *testing.T, c *offlinekube.Cluster, pool manifests.Pool, namespace, name string, workers int, alive func() error) {
	t.Helper()
	var state string
	waitFor(t, namespace+"/"+name+" admitted and running", func(ctx context.Context) (bool, error) {
		wl, err := workloadOf(ctx, c, namespace, name)
		if wl == nil || err != nil {
			state = "no Workload yet"
			return false, err
		}
		job, err := dyn(c).Resource(mpiJobGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := jobPods(ctx, c, namespace, name)
		if err != nil {
			return false, err
		}
		_, _, reserved := condition(wl, "QuotaReserved")
		state = fmt.Sprintf("Workload Admitted=%v PodsReady=%v (%s), suspended=%v, pods: %s",
			hasCondition(wl, "Admitted", "True"), hasCondition(wl, "PodsReady", "True"), reserved, suspended(job), describePods(pods))
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				running++
			}
		}
		return hasCondition(wl, "Admitted", "True") && hasCondition(wl, "PodsReady", "True") && !suspended(job) &&
			hasCondition(job, "Running", "True") && running == workers+1 && len(pods) == workers+1, alive()
	})
	t.Logf("%s/%s: %s", namespace, name, state)
	pods, err := jobPods(t.Context(), c, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	workerNodes := map[string]bool{}
	for _, p := range pods {
		node, err := c.Client().CoreV1().Nodes().Get(t.Context(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Labels[manifests.PoolLabel] != pool.Name {
			t.Errorf("%s runs on %s, outside pool %s (labels %v)", p.Name, node.Name, pool.Name, node.Labels)
		}
		if p.Labels[mpiJobRoleLabel] == "worker" {
			if p.Spec.NodeSelector[manifests.PoolLabel] != pool.Name {
				t.Errorf("%s has node selector %v: Kueue did not add flavor %s's node labels", p.Name, p.Spec.NodeSelector, pool.Name)
			}
			if gpus := p.Spec.Containers[0].Resources.Limits[manifests.GPUResource]; gpus.Value() != int64(pool.GPUsPerNode) {
				t.Errorf("worker %s has %s GPUs, want %d", p.Name, gpus.String(), pool.GPUsPerNode)
			}
			if workerNodes[node.Name] {
				t.Errorf("two workers of %s on %s", name, node.Name)
			}
			workerNodes[node.Name] = true
		}
	}
	if len(workerNodes) != workers {
		t.Errorf("%s/%s: %d workers on %d nodes, want %d: %s", namespace, name, workers, len(workerNodes), workers, describePods(pods))
	}
}

// assertHeld checks that namespace/name is suspended and has no pods.
func assertHeld(t *testing.T, c *offlinekube.Cluster, namespace, name string) {
	t.Helper()
	job, err := dyn(c).Resource(mpiJobGVR).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !suspended(job) {
		t.Errorf("%s/%s is not suspended while its Workload waits for quota", namespace, name)
	}
	if pods, err := jobPods(t.Context(), c, namespace, name); err != nil || len(pods) > 0 {
		t.Errorf("%s/%s has pods while its Workload waits for quota (%v): %s", namespace, name, err, describePods(pods))
	}
	if wl, _ := workloadOf(t.Context(), c, namespace, name); wl != nil && hasCondition(wl, "Admitted", "True") {
		t.Errorf("%s/%s's Workload is admitted: %v", namespace, name, wl.Object["status"])
	}
}
