package clustertest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// upgradeRoot is a control plane of three (the first node and a pool of two that joins it after
// it, as modules/cluster-core orders them) and a GPU worker pool of two one-GPU nodes after the
// control plane, every node installing Kubernetes release.
func upgradeRoot(release string) string {
	versions := fmt.Sprintf("\n    versions           = { kubernetes = %q }", release)
	pools := strings.Replace(etcdPool("control", "upg-cp", "ecs.g7.xlarge", 1, true), "ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash",
		"ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash"+versions, 1)
	join := strings.Replace(etcdPool("control_join", "upg-cp-join", "ecs.g7.xlarge", 2, false), "ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash",
		"ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash"+versions, 1)
	join = strings.Replace(join, "  name          = \"upg-cp-join\"", "  depends_on    = [gpucluster_node_pool.control]\n  name          = \"upg-cp-join\"", 1)
	return endpointRootHead("upg", "10.32.0.0/16") + pools + join + strings.Replace(
		t4Workers("upg-gpu", "\n  depends_on = [gpucluster_node_pool.control, gpucluster_node_pool.control_join]",
			"\n    api_server_name = gpucluster_control_plane_endpoint.api.api_server_name"+strings.Replace(versions, "           ", "", 1)),
		"size          = 1", "size          = 2", 1) + `
output "stack" {
  value = gpucluster_control_plane_endpoint.api.endpoint
}
`
}

// TestAccClusterKubernetesMinorUpgrade (issue #34): the cluster of upgradeRoot formed on the
// previous minor's real control plane (v1.36 binaries, offlinekube ControlPlaneReleases) and moved
// to the current minor's (v1.37) by changing the pools' release. A plan that skips a minor is
// refused naming the version skew policy, and nothing changes. The apply raises the cluster's
// version through Cloud Assistant (kubeadm upgrade apply, which replaces the offline control
// plane's kube-apiserver, controller manager and scheduler with the new release's binaries on
// the same etcd) before the first control-plane node is replaced, then replaces the control plane
// one node at a time and the workers after it: every node runs the new kubelet, kubeadm-config
// holds the new release, the API server reports it, and etcd lists exactly the three live
// control-plane nodes (the agent's list and the real etcd's, whose members the agent adds as
// learners, promotes and removes as kubeadm and the provider's script do). Throughout the apply
// a GPU workload of two replicas (one GPU each, so one a worker) keeps a replica running, the
// real etcd answers its health check (it has a leader: a quorum of its members runs), and the
// agent's list keeps a quorum connected (watchUpgrade); each roll waited for a wave's nodes to
// join before taking the next down (their consoles read).
func TestAccClusterKubernetesMinorUpgrade(t *testing.T) {
	older, newer := controlPlaneReleases(t)
	s := startStackOn(t, older)
	run := s.prepare(t, upgradeRoot(strings.TrimPrefix(older, "v")))
	s.useRealEtcd(t)
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	s.waitNodes(t, 3, 2)
	if v := s.clusterVersion(t); v != older {
		t.Fatalf("cluster version after forming: %q, want %s", v, older)
	}
	if v := s.serverVersion(t); v != older {
		t.Fatalf("the API server reports %q after forming, want %s", v, older)
	}

	skipped := version.MustParseGeneric(newer)
	run.Write(upgradeRoot(fmt.Sprintf("1.%d.0", skipped.Minor()+1)))
	code, out := run.Run("plan", "-no-color", "-input=false", "-detailed-exitcode")
	if code != 1 || !strings.Contains(out, fmt.Sprintf("skips 1.%d", skipped.Minor())) || !strings.Contains(out, "version-skew-policy") {
		t.Fatalf("plan %s -> 1.%d: exit %d, want the skip refused naming the skew policy:\n%s", older, skipped.Minor()+1, code, out)
	}

	startGPUWorkload(t, s.cluster.Client(), "steady", 2)
	watch := s.watchUpgrade(t, "steady")
	run.Write(upgradeRoot(strings.TrimPrefix(newer, "v")))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	seen := watch()
	consoleReads := s.emu.Stats().Calls["GetInstanceConsoleOutput"]
	t.Logf("during the upgrade: at least %d of 2 replicas ran (%d terminated by a shutdown), etcd lost quorum %d times and failed its health check %d times in a row (%d single failures: "+
		"leader elections), the API server reported %v (%d polls failed), the rolls read %d consoles",
		seen.minRunning, len(seen.shutDown), len(seen.etcdNoQuorum), len(seen.etcdUnhealthy), seen.etcdBlips, seen.apiVersions, seen.apiFailures, consoleReads)
	if want := []string{older, newer}; !slices.Equal(seen.apiVersions, want) {
		t.Errorf("the API server reported %v during the upgrade, want %v: the control plane's binaries replaced once", seen.apiVersions, want)
	}
	if len(seen.etcdUnhealthy) > 0 {
		t.Errorf("etcd failed its health check during the upgrade: %v", seen.etcdUnhealthy)
	}
	// The offline nodes join within a second of running (the agent's boot times are modeled,
	// not waited), so the replicas would survive here even if a roll took its next wave down
	// at once; on the cloud a GPU node takes minutes to join. The rolls must have waited for
	// each wave's nodes to join (nodepool join_wait.go), which they see on the consoles.
	if consoleReads == 0 {
		t.Error("no roll read a node's serial console: none waited for its waves' nodes to join the cluster")
	}
	// No successful count would leave minRunning at its start (MaxInt) and pass the check below.
	if seen.podPolls == 0 {
		t.Fatal("the watch never counted the workload's pods during the upgrade: nothing says it kept running")
	}
	// Each node drains itself through the Eviction API before the roll stops it, so the
	// workload's budget is asked; the kubelet's graceful shutdown, which asks no budget, finds
	// none of its pods left (nodepool drain_first.go).
	if len(seen.shutDown) > 0 {
		t.Errorf("the workload's pods %v were terminated by their node's shutdown, not evicted: its PodDisruptionBudget was never asked", seen.shutDown)
	}
	// The watch sees such a pod only while it is listed; the agent's own record of what each
	// shutdown terminated does not depend on a poll catching it.
	for _, p := range s.agent.ShutdownTerminated() {
		if strings.HasPrefix(p, "default/steady-") {
			t.Errorf("the node's shutdown terminated the workload's pod %s: it was not evicted first", p)
		}
	}
	if seen.minRunning < 1 || len(seen.etcdNoQuorum) > 0 {
		t.Errorf("during the upgrade the workload ran as few as %d of 2 replicas (want at least 1), and etcd lost quorum %d times: %v",
			seen.minRunning, len(seen.etcdNoQuorum), seen.etcdNoQuorum)
	}
	s.waitNodes(t, 3, 2)
	if v := s.clusterVersion(t); v != newer {
		t.Errorf("cluster version after the upgrade: %q, want %s", v, newer)
	}
	if v := s.serverVersion(t); v != newer {
		t.Errorf("the API server reports %q after the upgrade, want %s", v, newer)
	}
	live := map[string]string{}
	for _, st := range s.agent.Statuses() {
		if st.Node == "" {
			continue
		}
		live[st.Node] = st.InstanceID
		if "v"+st.KubeletVersion != newer {
			t.Errorf("node %s (%s) runs kubelet %q after the upgrade, want %s", st.Node, st.InstanceID, st.KubeletVersion, newer)
		}
		if strings.Contains(st.Reason, "KubeletVersion") {
			t.Errorf("instance %s was refused: %s", st.InstanceID, st.Reason)
		}
	}
	s.checkRealEtcd(t, "after the upgrade")
	members := s.etcdMembers(t)
	for _, m := range members {
		if live[m.Name] != m.InstanceID || !m.Connected {
			t.Errorf("etcd member %+v is not a live control-plane node (live: %v)", m, live)
		}
	}
	if len(members) != 3 || len(live) != 5 {
		t.Fatalf("after the upgrade etcd lists %+v and the nodes are %v: want 3 members, 5 nodes", members, live)
	}
	if f := s.agent.Failures(); len(f) > 0 {
		t.Errorf("the agent counted failures: %+v", f)
	}
}

// clusterVersion is kubeadm-config's kubernetesVersion as the node agent reports it.
func (s *stack) clusterVersion(t *testing.T) string {
	t.Helper()
	return s.agentReport(t).Version
}

// serverVersion is the release the offline API server reports at /version.
func (s *stack) serverVersion(t *testing.T) string {
	t.Helper()
	v, err := s.cluster.Client().Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return v.GitVersion
}

// controlPlaneReleases are the two releases the offline cluster has control-plane binaries of
// (make kube), the older first.
func controlPlaneReleases(t *testing.T) (older, newer string) {
	t.Helper()
	binDir, err := offlinekube.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	older, newer, err = offlinekube.UpgradeReleases(binDir)
	if err != nil {
		t.Fatal(err)
	}
	return older, newer
}

// startGPUWorkload creates a Deployment of replicas pods of one GPU each off the control plane,
// with a PodDisruptionBudget that keeps at least one of them available (what a workload that must
// keep serving declares), and waits until they all run.
func startGPUWorkload(t *testing.T, client kubernetes.Interface, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					// The GPU nodes' taint only, as a GPU workload tolerates it: a node that is
					// shutting down (not-ready) or cordoned takes nothing new.
					Tolerations: []corev1.Toleration{{Key: bootstrap.GPUTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{Name: "work", Image: "registry.example/work:1",
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{nodeagent.GPUResource: resource.MustParse("1")}}}},
				},
			},
		},
	}
	ctx := t.Context()
	if _, err := client.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	budget := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	if _, err := client.PolicyV1().PodDisruptionBudgets("default").Create(ctx, budget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(within(t, 2*time.Minute), t, "the workload's pods to run", func(ctx context.Context) (bool, error) {
		n, _, err := runningPods(ctx, client, name)
		return n == int(replicas), fmt.Errorf("%d of %d running (%v)", n, replicas, err)
	})
}

// runningPods counts the workload's pods that run and are not being deleted, and names those a
// node's shutdown terminated (DisruptionTarget, reason TerminationByKubelet): pods that left
// without the Eviction API, so without their PodDisruptionBudget being asked.
func runningPods(ctx context.Context, client kubernetes.Interface, app string) (running int, shutDown []string, err error) {
	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return 0, nil, err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
		if slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.DisruptionTarget && c.Reason == corev1.PodReasonTerminationByKubelet
		}) {
			shutDown = append(shutDown, p.Name+" on "+p.Spec.NodeName)
		}
	}
	return running, shutDown, nil
}

// upgradeWatch is what watchUpgrade saw.
type upgradeWatch struct {
	minRunning    int
	podPolls      int      // polls that counted the workload's pods (minRunning is theirs)
	shutDown      []string // the workload's pods a node's shutdown terminated, not an eviction
	etcdNoQuorum  []string // each time fewer than a quorum of etcd's members were connected
	etcdUnhealthy []string // each time the real etcd failed its /health twice in a row
	etcdBlips     int      // single failed /health polls (a leader election)
	apiVersions   []string // the API server's /version, each change in order
	apiFailures   int      // polls of the API that failed
}

// watchUpgrade polls, until the returned function is called, how many of the workload's pods run,
// whether etcd's connected members are a quorum of its members, whether the offline cluster's
// etcd answers its health check, and the API server's release, and answers the lowest count,
// every loss of quorum or health, and each release in turn.
func (s *stack) watchUpgrade(t *testing.T, app string) func() upgradeWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	seen := upgradeWatch{minRunning: math.MaxInt}
	done := make(chan struct{})
	go func() {
		defer close(done)
		failedBefore := false
		for ctx.Err() == nil {
			if n, shutDown, err := runningPods(ctx, s.cluster.Client(), app); err == nil {
				seen.minRunning = min(seen.minRunning, n)
				seen.podPolls++
				for _, p := range shutDown {
					if !slices.Contains(seen.shutDown, p) {
						seen.shutDown = append(seen.shutDown, p)
					}
				}
			} else if ctx.Err() == nil {
				seen.apiFailures++
			}
			if v, err := s.cluster.Client().Discovery().ServerVersion(); err == nil {
				if len(seen.apiVersions) == 0 || seen.apiVersions[len(seen.apiVersions)-1] != v.GitVersion {
					seen.apiVersions = append(seen.apiVersions, v.GitVersion)
				}
			} else if ctx.Err() == nil {
				seen.apiFailures++
			}
			// One failed poll is a leader election: when the leader's member is removed the others
			// elect another within etcd's election timeout (here ~0.1-0.2 s, once per removal of
			// the leader), which etcd's clients ride out; an outage is a second failure in a row
			// half a second later.
			if err := s.cluster.EtcdHealth(ctx); err != nil && ctx.Err() == nil {
				if failedBefore {
					seen.etcdUnhealthy = append(seen.etcdUnhealthy, time.Now().Format(time.TimeOnly)+" "+err.Error())
				} else {
					seen.etcdBlips++
				}
				failedBefore = true
			} else {
				failedBefore = false
			}
			if members, err := s.fetchAgentReport(); err == nil {
				connected := 0
				for _, m := range members.Members {
					if m.Connected {
						connected++
					}
				}
				if connected <= len(members.Members)/2 {
					seen.etcdNoQuorum = append(seen.etcdNoQuorum, fmt.Sprintf("%+v", members.Members))
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() upgradeWatch {
		cancel()
		<-done
		return seen
	}
}
