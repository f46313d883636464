package clustertest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
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

// TestAccClusterKubernetesMinorUpgrade (issue #34): the cluster of upgradeRoot at 1.32 moved to
// 1.33 by changing the pools' release. A plan that skips a minor (to 1.34) is refused naming the
// version skew policy, and nothing changes. The apply raises the cluster's version through
// Cloud Assistant (kubeadm upgrade apply) before the first control-plane node is replaced, then
// replaces the control plane one node at a time and the workers after it: every node runs the
// 1.33 kubelet, kubeadm-config holds v1.33.6, and etcd lists exactly the three live control-plane
// nodes. Throughout the apply a GPU workload of two replicas (one GPU each, so one a worker)
// keeps a replica running, and etcd keeps a quorum of its members connected (watchUpgrade); each
// roll waited for a wave's nodes to join before taking the next down (their consoles read).
// Versions are the node agent's model (nodeagent/upgrade.go): the offline API server is one real
// v1.37.2 whatever the nodes install.
func TestAccClusterKubernetesMinorUpgrade(t *testing.T) {
	s := startStack(t)
	run := s.prepare(t, upgradeRoot("1.32.9"))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	s.waitNodes(t, 3, 2)
	if v := s.clusterVersion(t); v != "v1.32.9" {
		t.Fatalf("cluster version after forming: %q, want v1.32.9", v)
	}

	run.Write(upgradeRoot("1.34.2"))
	code, out := run.Run("plan", "-no-color", "-input=false", "-detailed-exitcode")
	if code != 1 || !strings.Contains(out, "skips 1.33") || !strings.Contains(out, "version-skew-policy") {
		t.Fatalf("plan 1.32 -> 1.34: exit %d, want the skip refused naming the skew policy:\n%s", code, out)
	}

	startGPUWorkload(t, s.cluster.Client(), "steady", 2)
	watch := s.watchUpgrade(t, "steady")
	run.Write(upgradeRoot("1.33"))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	seen := watch()
	consoleReads := s.emu.Stats().Calls["GetInstanceConsoleOutput"]
	t.Logf("during the upgrade: at least %d of 2 replicas ran, etcd lost quorum %d times, the rolls read %d consoles", seen.minRunning, len(seen.etcdNoQuorum), consoleReads)
	// The offline nodes join within a second of running (the agent's boot times are modeled,
	// not waited), so the replicas would survive here even if a roll took its next wave down
	// at once; on the cloud a GPU node takes minutes to join. The rolls must have waited for
	// each wave's nodes to join (nodepool join_wait.go), which they see on the consoles.
	if consoleReads == 0 {
		t.Error("no roll read a node's serial console: none waited for its waves' nodes to join the cluster")
	}
	if seen.minRunning < 1 || len(seen.etcdNoQuorum) > 0 {
		t.Errorf("during the upgrade the workload ran as few as %d of 2 replicas (want at least 1), and etcd lost quorum %d times: %v",
			seen.minRunning, len(seen.etcdNoQuorum), seen.etcdNoQuorum)
	}
	s.waitNodes(t, 3, 2)
	if v := s.clusterVersion(t); v != "v1.33.6" {
		t.Errorf("cluster version after the upgrade: %q, want v1.33.6", v)
	}
	live := map[string]string{}
	for _, st := range s.agent.Statuses() {
		if st.Node == "" {
			continue
		}
		live[st.Node] = st.InstanceID
		if st.KubeletVersion != "1.33.6" {
			t.Errorf("node %s (%s) runs kubelet %q after the upgrade, want 1.33.6", st.Node, st.InstanceID, st.KubeletVersion)
		}
		if strings.Contains(st.Reason, "KubeletVersion") {
			t.Errorf("instance %s was refused: %s", st.InstanceID, st.Reason)
		}
	}
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

// startGPUWorkload creates a Deployment of replicas pods of one GPU each off the control plane,
// and waits until they all run.
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
	waitUntil(within(t, 2*time.Minute), t, "the workload's pods to run", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, client, name)
		return n == int(replicas), fmt.Errorf("%d of %d running (%v)", n, replicas, err)
	})
}

// runningPods counts the workload's pods that run and are not being deleted.
func runningPods(ctx context.Context, client kubernetes.Interface, app string) (int, error) {
	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n, nil
}

// upgradeWatch is what watchUpgrade saw.
type upgradeWatch struct {
	minRunning   int
	etcdNoQuorum []string // each time fewer than a quorum of etcd's members were connected
}

// watchUpgrade polls, until the returned function is called, how many of the workload's pods run
// and whether etcd's connected members are a quorum of its members, and answers the lowest count
// and every loss of quorum.
func (s *stack) watchUpgrade(t *testing.T, app string) func() upgradeWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	seen := upgradeWatch{minRunning: math.MaxInt}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if n, err := runningPods(ctx, s.cluster.Client(), app); err == nil {
				seen.minRunning = min(seen.minRunning, n)
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
