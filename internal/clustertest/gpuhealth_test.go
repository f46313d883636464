package clustertest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// xidReplaceTimeout bounds the whole replacement: two of the agent's 30 s rounds (taint and
// evict, then ask once the GPU pod is gone), Auto Scaling's launch and the new node's boot.
const xidReplaceTimeout = 6 * time.Minute

// TestAccClusterGPUReplacedOnXID (issue #33): ai-training with one autoscaling GPU pool (min 1,
// max 2) and its defaults otherwise, the GPU health agent among them. The offline cluster runs
// the real agent (cmd/gpucluster-gpu-health-agent) for the agent DaemonSet's pod on the node,
// reading the node's dcgm-exporter pod, its instance's metadata service (the worker RAM role's
// keys) and the cloud's API, as on the cloud. A GPU pod runs on the node; then the node's GPU 1
// falls off the bus (XID 79, injected into the emulator's instance). The agent taints the node,
// evicts the GPU pod, and has Auto Scaling replace the instance: the test ends with the old
// instance released, its Node gone, and a new instance's Node Ready. Nothing else in the stack
// acts on an XID: without the agent's DaemonSet the node keeps its taint-free GPU and the test
// fails waiting.
func TestAccClusterGPUReplacedOnXID(t *testing.T) {
	s := startStack(t)
	s.apply(t, scenarioRoot("ai-training", "xid-kube", `worker_pools = { gpu = { autoscaling = { min_size = 1, max_size = 2 } } }
  cold_storage = { force_destroy = true }`))
	ctx := t.Context()
	client := s.cluster.Client()
	old := s.gpuInstances()
	if len(old) != 1 {
		t.Fatalf("GPU instances after apply: %v, want the autoscaling pool's one", old)
	}
	oldNode := s.nodeOf(t, old[0])
	waitUntil(within(t, 3*time.Minute), t, "the node's GPU health agent and dcgm-exporter pods to run", func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(manifests.DefaultNamespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + oldNode})
		if err != nil {
			return false, err
		}
		running := map[string]bool{}
		for _, p := range pods.Items {
			running[p.Labels["app.kubernetes.io/name"]] = p.Status.Phase == corev1.PodRunning
		}
		return running[manifests.GPUHealthAgentName] && running["dcgm-exporter"], fmt.Errorf("pods on %s: %v", oldNode, running)
	})
	trainer := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": oldNode},
			Tolerations:  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "train", Image: "registry.example/train:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{nodeagent.GPUResource: resource.MustParse("1")}}}},
		},
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, trainer, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(within(t, time.Minute), t, "the GPU pod to run", func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods("default").Get(ctx, "trainer", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodRunning, fmt.Errorf("phase %s", p.Status.Phase)
	})

	resp, err := http.Post(s.emu.URL+emulator.GPUFaultsPath, "application/json",
		strings.NewReader(fmt.Sprintf(`{"instance_id":%q,"gpu":1,"xid":79}`, old[0])))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %s", emulator.GPUFaultsPath, resp.Status)
	}

	var tainted, trainerGone bool
	waitUntil(within(t, xidReplaceTimeout), t, "the faulty node replaced by a new Ready one", func(ctx context.Context) (bool, error) {
		if n, err := client.CoreV1().Nodes().Get(ctx, oldNode, metav1.GetOptions{}); err == nil {
			tainted = tainted || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
				return t.Key == health.UnhealthyTaintKey && t.Effect == corev1.TaintEffectNoSchedule
			})
		}
		if _, err := client.CoreV1().Pods("default").Get(ctx, "trainer", metav1.GetOptions{}); err != nil {
			trainerGone = true
		}
		now := s.gpuInstances()
		if slices.Contains(now, old[0]) || len(now) != 1 {
			return false, fmt.Errorf("GPU instances %v (old %s); taint seen %t, GPU pod gone %t", now, old[0], tainted, trainerGone)
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var ready, stale bool
		for _, n := range nodes.Items {
			switch n.Annotations[nodeagent.InstanceAnnotation] {
			case now[0]:
				ready = nodeReady(&n)
			case old[0]:
				stale = true
			}
		}
		return ready && !stale, fmt.Errorf("new instance %s: node Ready %t; old node still registered %t", now[0], ready, stale)
	})
	if !tainted || !trainerGone {
		t.Errorf("before the replacement: taint %s seen %t, the GPU pod evicted %t; want both", health.UnhealthyTaintKey, tainted, trainerGone)
	}
	if n := s.emu.Stats().Calls["SetInstanceHealth"]; n == 0 {
		t.Error("no SetInstanceHealth call: the instance went some other way than the agent's request")
	}
}

// nodeOf is the name of the Node of an instance, once its node has registered. An autoscaling
// pool's apply ends once Auto Scaling runs its instances, not when they join: the node may
// register a little later (seen in CI: "does not register: load balancer ... has no running
// backend server" until the control plane's node was a backend).
func (s *stack) nodeOf(t *testing.T, instanceID string) string {
	t.Helper()
	var name string
	waitUntil(within(t, 3*time.Minute), t, "instance "+instanceID+"'s node to register", func(ctx context.Context) (bool, error) {
		nodes, err := s.cluster.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, n := range nodes.Items {
			if n.Annotations[nodeagent.InstanceAnnotation] == instanceID {
				name = n.Name
				return true, nil
			}
		}
		return false, fmt.Errorf("no node for instance %s among %d", instanceID, len(nodes.Items))
	})
	return name
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// within is the test's context, ended after d.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
