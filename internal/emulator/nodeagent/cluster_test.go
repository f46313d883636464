package nodeagent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// clusterStepTimeout bounds a step against the real API server on a loaded 2-core machine: a
// bound for a hang, not a measure of speed.
const clusterStepTimeout = 90 * time.Second

// TestWithRealCluster runs the agent against a real kube-apiserver, controller-manager,
// scheduler and kwok (internal/offlinekube), one cluster for every scenario; each scenario has
// its own emulator and its own host names.
func TestWithRealCluster(t *testing.T) {
	tc := offlinekube.StartT(t, offlinekube.Options{})
	kube, err := NewKube(tc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	client := tc.Client()
	cas := testCAs(t)

	t.Run("init and GPU workers register and go Ready", func(t *testing.T) {
		s := startCloud(t, true)
		cpOpts := firstControlPlane(cas[0])
		cpOpts = s.behind(cpOpts)
		cpOpts.Kubernetes.Addons = addonsYAML(t, 2, 2)
		cp := s.run(t, "ecs.g7.xlarge", "good-cp-0", renderDoc(t, cpOpts))
		s.backends(t, cp)
		wOpts := gpuWorker(cas[0])
		wOpts = s.behind(wOpts)
		w1 := s.run(t, "ecs.gn7i-c32g1.16xlarge", "good-gpu-0", renderDoc(t, wOpts))
		w2 := s.run(t, "ecs.gn7i-c32g1.16xlarge", "good-gpu-1", renderDoc(t, wOpts))
		got := s.settle(t, s.startAgent(t, kube), []string{cp, w1, w2}, registered)

		for _, name := range []string{"good-gpu-0", "good-gpu-1"} {
			n := waitReady(t, client, name)
			for k, v := range wOpts.Kubernetes.Labels {
				if n.Labels[k] != v {
					t.Errorf("%s label %s = %q, want %q", name, k, n.Labels[k], v)
				}
			}
			want := []corev1.Taint{{Key: bootstrap.GPUTaintKey, Effect: corev1.TaintEffectNoSchedule}}
			if !slices.EqualFunc(n.Spec.Taints, want, func(a, b corev1.Taint) bool { return a.Key == b.Key && a.Value == b.Value && a.Effect == b.Effect }) {
				t.Errorf("%s taints = %+v, want %+v", name, n.Spec.Taints, want)
			}
			gpus, cpu, mem, pods := n.Status.Allocatable[GPUResource], n.Status.Allocatable["cpu"], n.Status.Allocatable["memory"], n.Status.Allocatable["pods"]
			if gpus.Value() != 2 || cpu.Value() != 64 || mem.Value() != 376<<30 || pods.Value() != maxPods {
				t.Errorf("%s allocatable = %v, want 2 GPUs, 64 CPUs, 376Gi, %d pods (ecs.gn7i-c32g1.16xlarge)", name, n.Status.Allocatable, maxPods)
			}
		}
		c := waitReady(t, client, "good-cp-0")
		if !slices.ContainsFunc(c.Spec.Taints, func(x corev1.Taint) bool { return x.Key == "node-role.kubernetes.io/control-plane" }) {
			t.Errorf("good-cp-0 taints = %+v, want the control-plane taint", c.Spec.Taints)
		}
		// The add-ons: Flannel and the cluster's, applied server-side in file order.
		var failed []string
		for _, r := range got[cp].Addons {
			if r.Error != "" {
				failed = append(failed, r.File+" "+r.Object+": "+r.Error)
			}
		}
		if len(got[cp].Addons) == 0 || len(failed) > 0 {
			t.Errorf("add-ons: %d objects, failed: %s", len(got[cp].Addons), strings.Join(failed, "\n"))
		}
		if got[cp].Addons[0].File != bootstrap.CNIAddonFile {
			t.Errorf("first add-on object from %s, want the CNI's %s", got[cp].Addons[0].File, bootstrap.CNIAddonFile)
		}
		if _, err := client.AppsV1().DaemonSets("kube-flannel").Get(t.Context(), "kube-flannel-ds", metav1.GetOptions{}); err != nil {
			t.Errorf("Flannel's DaemonSet: %v", err)
		}
		if _, err := client.BatchV1().CronJobs(manifests.DefaultNamespace).Get(t.Context(), "gpu-idle-reaper", metav1.GetOptions{}); err != nil {
			t.Errorf("the reaper CronJob: %v", err)
		}
		// The cross-node all-reduce: one pod per GPU node, on distinct nodes (anti-affinity).
		pods := waitPods(t, client, manifests.DefaultWorkloadNamespace, "job-name="+manifests.PoolAllReduceName, 2)
		if pods[0] == pods[1] || !strings.HasPrefix(pods[0], "good-gpu-") || !strings.HasPrefix(pods[1], "good-gpu-") {
			t.Errorf("all-reduce pods on %v, want one on each GPU node", pods)
		}
		// A pod without the GPU toleration has nowhere to go: the GPU nodes' taint and the
		// control plane's keep it out.
		plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "no-toleration", Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
		if _, err := client.CoreV1().Pods("default").Create(t.Context(), plain, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitUnschedulable(t, client, "default", "no-toleration")
		mustContain(t, "the untolerating pod's scheduling message", p, "untolerated taint")
	})

	t.Run("no egress: nothing with upstream sources registers", func(t *testing.T) {
		s := startCloud(t, false)
		cp, w := s.smallCluster(t, "noegress", cas[0], cas[0], upstream)
		s.settle(t, s.startAgent(t, kube), []string{cp, w}, func(st NodeStatus) bool { return strings.HasPrefix(st.Reason, NoRouteReason) })
		assertNoNodes(t, client, "noegress-cp-0", "noegress-gpu-0")
	})

	t.Run("worker with a wrong CA hash", func(t *testing.T) {
		s := startCloud(t, true)
		cp, w := s.smallCluster(t, "wrongca", cas[0], cas[1])
		got := s.settle(t, s.startAgent(t, kube), []string{cp, w}, func(st NodeStatus) bool {
			return st.Node != "" || strings.Contains(st.Reason, "pinned caCertHashes")
		})
		if got[cp].Node != "wrongca-cp-0" {
			t.Errorf("the control plane did not register: %+v", got[cp])
		}
		mustContain(t, "worker reason", got[w].Reason, "its CA hash "+cas[0].hash+" is not among the pinned caCertHashes "+cas[1].hash)
		assertNoNodes(t, client, "wrongca-gpu-0")
	})

	t.Run("a stopped instance's node goes NotReady and comes back", func(t *testing.T) {
		s := startCloud(t, true)
		cp, w := s.smallCluster(t, "power", cas[0], cas[0])
		a := s.startAgent(t, kube)
		s.settle(t, a, []string{cp, w}, registered)
		waitReady(t, client, "power-gpu-0")

		s.power(t, w, false)
		got := s.settle(t, a, []string{w}, func(st NodeStatus) bool { return st.Status == "Stopped" })
		mustContain(t, "the stopped node's reason", got[w].Reason, "instance Stopped: its kubelet posts no status")
		// The node lifecycle controller sees the Unknown Ready condition and taints the node
		// unreachable: nothing new schedules there.
		waitNode(t, client, "power-gpu-0", "Ready Unknown and tainted unreachable", func(n *corev1.Node) bool {
			return nodeReady(n) == corev1.ConditionUnknown && slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.Key == corev1.TaintNodeUnreachable })
		})

		s.power(t, w, true)
		got = s.settle(t, a, []string{w}, func(st NodeStatus) bool { return st.Status == "Running" })
		if got[w].Reason != "" || got[w].Node != "power-gpu-0" {
			t.Errorf("the restarted worker: %+v, want node power-gpu-0 and no reason", got[w])
		}
		waitNode(t, client, "power-gpu-0", "Ready again, untainted", func(n *corev1.Node) bool {
			return nodeReady(n) == corev1.ConditionTrue && !slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.Key == corev1.TaintNodeUnreachable })
		})

		// The first control-plane node applies its add-ons on every boot: one deleted by hand
		// while it was stopped comes back when it runs again.
		s.power(t, cp, false)
		s.settle(t, a, []string{cp}, func(st NodeStatus) bool { return st.Status == "Stopped" })
		flannel := client.AppsV1().DaemonSets("kube-flannel")
		if err := flannel.Delete(t.Context(), "kube-flannel-ds", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := flannel.Get(t.Context(), "kube-flannel-ds", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("Flannel's DaemonSet after deleting it: %v", err)
		}
		s.power(t, cp, true)
		got = s.settle(t, a, []string{cp}, func(st NodeStatus) bool { return st.Status == "Running" })
		if len(got[cp].Addons) == 0 {
			t.Errorf("the restarted control plane lists no add-ons: %+v", got[cp])
		}
		if _, err := flannel.Get(t.Context(), "kube-flannel-ds", metav1.GetOptions{}); err != nil {
			t.Errorf("Flannel's DaemonSet, deleted by hand, is not back after the control plane's reboot: %v", err)
		}
	})

	t.Run("region model: Flannel's images cannot be pulled, the nodes register NotReady", func(t *testing.T) {
		s := startCloud(t, true)
		// The upstream bootstrap rewritten to in-region sources but Flannel's (region_test.go).
		cpOpts := upstream(firstControlPlane(cas[0]))
		cpOpts = s.behind(cpOpts)
		cp := s.run(t, "ecs.g7.xlarge", "nocni-cp-0", rewrittenDoc(t, cpOpts, inRegion, flannelFromGHCR))
		s.backends(t, cp)
		wOpts := upstream(gpuWorker(cas[0]))
		wOpts = s.behind(wOpts)
		w := s.run(t, "ecs.gn7i-c32g1.16xlarge", "nocni-gpu-0", rewrittenDoc(t, wOpts, inRegion))
		got := s.settle(t, s.startAgent(t, kube), []string{cp, w}, registered)
		for id, name := range map[string]string{cp: "nocni-cp-0", w: "nocni-gpu-0"} {
			mustContain(t, name+" reason", got[id].Reason, "ghcr.io is unreliable from cn-wulanchabu")
			waitNode(t, client, name, "NotReady for want of a pod network", func(n *corev1.Node) bool {
				return nodeReady(n) == corev1.ConditionFalse && hasCondition(n, corev1.NodeReady, corev1.ConditionFalse, "cni plugin not initialized")
			})
		}
		// kwok manages only nodes annotated fake: a while later the worker is still not Ready.
		time.Sleep(3 * time.Second)
		n, err := client.CoreV1().Nodes().Get(t.Context(), "nocni-gpu-0", metav1.GetOptions{})
		if err != nil || nodeReady(n) == corev1.ConditionTrue {
			t.Errorf("nocni-gpu-0 went Ready without a pod network (err %v)", err)
		}
	})

	t.Run("a condition the agent registers survives kwok's initialisation", func(t *testing.T) {
		in := instance("i-fm", "10.0.9.10", "", true)
		in.Type, in.GPUs = "ecs.sccgn7ex.32xlarge", 8
		c, ok := fabricManagerMissing(&in, NodePlan{})
		if !ok {
			t.Fatal("sccgn7ex without Fabric Manager: no condition")
		}
		if err := kube.RegisterNode(t.Context(), nodeFor(&in, NodePlan{NodeName: "fm-gpu-0"}, false, "", []corev1.NodeCondition{c})); err != nil {
			t.Fatal(err)
		}
		n := waitReady(t, client, "fm-gpu-0")
		if !hasCondition(n, ConditionCUDAInitFailed, corev1.ConditionTrue, "error 802") {
			t.Errorf("fm-gpu-0 lost its %s condition once Ready: %+v", ConditionCUDAInitFailed, n.Status.Conditions)
		}
	})

	t.Run("a replaced node's Job pod is terminated gracefully and rescheduled", func(t *testing.T) {
		testReplacedNodeDrains(t, kube, client, cas[0])
	})

	t.Run("a drain asks the API, whose PodDisruptionBudget refuses", func(t *testing.T) {
		testDrainAsksTheBudget(t, kube, client)
	})

	t.Run("a second kubeadm init", func(t *testing.T) {
		s := startCloud(t, true)
		cpOpts := firstControlPlane(cas[0])
		cpOpts = s.behind(cpOpts)
		cpOpts.Kubernetes.CertificateKey = "" // a control plane of 2 that both run kubeadm init
		doc := renderDoc(t, cpOpts)
		cp1 := s.run(t, "ecs.g7.xlarge", "twoinit-cp-0", doc)
		s.backends(t, cp1)
		a := s.startAgent(t, kube)
		s.settle(t, a, []string{cp1}, registered)
		cp2 := s.run(t, "ecs.g7.xlarge", "twoinit-cp-1", doc)
		got := s.settle(t, a, []string{cp2}, func(st NodeStatus) bool { return st.Reason != "" && st.Status == "Running" })
		mustContain(t, "second reason", got[cp2].Reason, fmt.Sprintf("second kubeadm init: the API server at %s:6443 was already initialised by %s (twoinit-cp-0)", bootstrap.APIServerNameFor(s.lbID), cp1))
		assertNoNodes(t, client, "twoinit-cp-1")
	})
}

// waitReady waits for kwok to make the node Ready and for the node lifecycle controller to take
// its not-ready taint off again, and returns it: then the scheduler can place pods there.
func waitReady(t *testing.T, client kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterStepTimeout)
	defer cancel()
	for {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil && slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
			return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		}) && !slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.Key == corev1.TaintNodeNotReady }) {
			return n
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node %s not Ready: %v (last error %v)", name, n, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// nodeReady is the status of the node's Ready condition ("" when it has none).
func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// waitNode waits until the node satisfies ok (what says what ok waits for).
func waitNode(t *testing.T, client kubernetes.Interface, name, what string, ok func(*corev1.Node) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterStepTimeout)
	defer cancel()
	for {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil && ok(n) {
			return
		}
		select {
		case <-ctx.Done():
			if n != nil {
				t.Fatalf("node %s not %s: conditions %+v, taints %+v (last error %v)", name, what, n.Status.Conditions, n.Spec.Taints, err)
			}
			t.Fatalf("node %s not %s: %v", name, what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitPods waits until n pods matching the selector are bound to nodes, and returns the nodes.
func waitPods(t *testing.T, client kubernetes.Interface, ns, selector string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterStepTimeout)
	defer cancel()
	for {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		var nodes []string
		if err == nil {
			for _, p := range list.Items {
				if p.Spec.NodeName != "" {
					nodes = append(nodes, p.Spec.NodeName)
				}
			}
			if len(nodes) >= n {
				return nodes
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pods %s in %s: %d bound, want %d (%v)", selector, ns, len(nodes), n, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitUnschedulable waits for the scheduler to give up on a pod and returns its message.
func waitUnschedulable(t *testing.T, client kubernetes.Interface, ns, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterStepTimeout)
	defer cancel()
	for {
		p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if p.Spec.NodeName != "" {
				t.Fatalf("pod %s was bound to %s", name, p.Spec.NodeName)
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					return c.Message
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s: the scheduler did not report it unschedulable (%v)", name, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func assertNoNodes(t *testing.T, client kubernetes.Interface, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{}); err == nil {
			t.Errorf("node %s registered; it must not", name)
		}
	}
}
