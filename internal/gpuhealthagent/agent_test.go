package gpuhealthagent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// dcgmExporter plays dcgm-exporter on a node of two GPUs: the two counters the agent reads, in
// the exporter's exposition (help, type, and its labels), with the last XID of each GPU.
type dcgmExporter struct {
	mu   sync.Mutex
	xids [2]int
}

func (d *dcgmExporter) set(gpu, xid int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.xids[gpu] = xid
}

func (d *dcgmExporter) text(context.Context) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	b.WriteString("# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n")
	for gpu, xid := range d.xids {
		fmt.Fprintf(&b, "DCGM_FI_DEV_XID_ERRORS{gpu=\"%d\",UUID=\"GPU-%d\",device=\"nvidia%d\",modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"gpu-0\"} %d\n", gpu, gpu, gpu, xid)
	}
	b.WriteString("# HELP DCGM_FI_DEV_ROW_REMAP_FAILURE Whether remapping of rows has failed\n# TYPE DCGM_FI_DEV_ROW_REMAP_FAILURE gauge\n")
	for gpu := range d.xids {
		fmt.Fprintf(&b, "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"%d\",UUID=\"GPU-%d\"} 0\n", gpu, gpu)
	}
	return b.String(), nil
}

// TestAgentIsolatesAndReleasesAFailingGPU runs the agent against a real API server (with the real
// disruption controller and kwok as the node's kubelet): an XID 79 on one GPU sets the condition,
// the replace taint and the replacement request, evicts the GPU pod without a budget and leaves
// the one a PodDisruptionBudget protects (and the pod without a GPU); once the XID is cleared the
// condition, taint and request go, and the cordon a person set meanwhile stays.
func TestAgentIsolatesAndReleasesAFailingGPU(t *testing.T) {
	c := offlinekube.StartT(t, offlinekube.Options{})
	ctx := t.Context()
	client := c.Client()
	node := "gpu-0"
	gpuNode(ctx, t, client, node)
	mustCreate(t, "namespace", func() error {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "train"}}, metav1.CreateOptions{})
		return err
	})
	minOne := intstr.FromInt32(1)
	mustCreate(t, "budget", func() error {
		_, err := client.PolicyV1().PodDisruptionBudgets("train").Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "protected"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minOne,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "protected"}}},
		}, metav1.CreateOptions{})
		return err
	})
	pod(ctx, t, client, node, "trainer", "train", 1)
	pod(ctx, t, client, node, "protected", "train", 1)
	pod(ctx, t, client, node, "sidecar", "train", 0)
	for _, p := range []string{"trainer", "protected", "sidecar"} {
		waitFor(t, "pod "+p+" running", func() (bool, error) {
			got, err := client.CoreV1().Pods("train").Get(ctx, p, metav1.GetOptions{})
			return err == nil && got.Status.Phase == corev1.PodRunning, err
		})
	}
	waitFor(t, "the budget's status", func() (bool, error) {
		b, err := client.PolicyV1().PodDisruptionBudgets("train").Get(ctx, "protected", metav1.GetOptions{})
		return err == nil && b.Status.ObservedGeneration == b.Generation && b.Status.CurrentHealthy == 1, err
	})

	exporter := &dcgmExporter{}
	agent := &Agent{Client: client, Node: node, Metrics: exporter.text}

	exporter.set(1, 13) // the application's error: the GPU stays in service
	res, err := agent.Reconcile(ctx)
	if err != nil || len(res.Findings) != 0 || len(res.Evicted)+len(res.Blocked) != 0 {
		t.Fatalf("healthy round: %+v, %v; want no finding and no eviction", res, err)
	}
	checkNode(ctx, t, client, node, corev1.ConditionFalse, "", false)

	exporter.set(0, 79)
	res, err = agent.Reconcile(ctx)
	if err != nil {
		t.Fatalf("XID 79 round: %v", err)
	}
	if !slices.Equal(res.Evicted, []string{"train/trainer"}) || !slices.Equal(res.Blocked, []string{"train/protected"}) {
		t.Fatalf("XID 79 round evicted %v, blocked %v; want the budget-free GPU pod evicted and the protected one blocked", res.Evicted, res.Blocked)
	}
	// The accepted eviction is the API server's: the pod is ending or gone, not only reported.
	if got, err := client.CoreV1().Pods("train").Get(ctx, "trainer", metav1.GetOptions{}); err == nil && got.DeletionTimestamp == nil {
		t.Errorf("pod trainer reported evicted but not being deleted")
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	got := checkNode(ctx, t, client, node, corev1.ConditionTrue, "replace", true)
	if cond := condition(got); cond.Reason != "XID79" || !strings.Contains(cond.Message, "GPU 0: XID 79") {
		t.Errorf("condition %+v, want reason XID79 naming GPU 0", cond)
	}
	for _, p := range []string{"protected", "sidecar"} {
		if got, err := client.CoreV1().Pods("train").Get(ctx, p, metav1.GetOptions{}); err != nil || got.DeletionTimestamp != nil {
			t.Errorf("pod %s: %v (deleting: %v), want it left running", p, err, got != nil && got.DeletionTimestamp != nil)
		}
	}

	// A person cordons the node; the GPU is reset and its XID clears.
	cordon(ctx, t, client, node)
	exporter.set(0, 0)
	if res, err = agent.Reconcile(ctx); err != nil || len(res.Findings) != 0 {
		t.Fatalf("recovered round: %+v, %v", res, err)
	}
	got = checkNode(ctx, t, client, node, corev1.ConditionFalse, "", false)
	if !got.Spec.Unschedulable {
		t.Errorf("the agent undid a person's cordon")
	}
}

func gpuNode(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{offlinekube.KwokNodeAnnotation: "fake"}}}
	mustCreate(t, "node", func() error {
		_, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		return err
	})
	waitFor(t, "node "+name+" Ready", func() (bool, error) {
		got, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	// The device plugin's capacity, as the kubelet reports it.
	waitFor(t, "node "+name+" GPU capacity", func() (bool, error) {
		got, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.Capacity == nil {
			got.Status.Capacity = corev1.ResourceList{}
			got.Status.Allocatable = corev1.ResourceList{}
		}
		got.Status.Capacity[GPUResource] = resource.MustParse("2")
		got.Status.Allocatable[GPUResource] = resource.MustParse("2")
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{})
		return err == nil, nil
	})
}

func pod(ctx context.Context, t *testing.T, client kubernetes.Interface, node, name, ns string, gpus int64) {
	t.Helper()
	c := corev1.Container{Name: "main", Image: "registry.example/app:1"}
	if gpus > 0 {
		q := *resource.NewQuantity(gpus, resource.DecimalSI)
		c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{GPUResource: q}, Requests: corev1.ResourceList{GPUResource: q}}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{c},
			Tolerations: []corev1.Toleration{{Key: offlinekube.KwokNodeAnnotation, Operator: corev1.TolerationOpExists}}}}
	mustCreate(t, "pod "+name, func() error {
		_, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
}

func cordon(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	updateNode(ctx, t, client, name, "cordon", func(n *corev1.Node) { n.Spec.Unschedulable = true })
}

// updateNode changes the node as change says, read again and retried on a conflict: kwok, playing
// the kubelet, writes the Node too.
func updateNode(ctx context.Context, t *testing.T, client kubernetes.Interface, name, what string, change func(*corev1.Node)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(n)
		_, err = client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// checkNode compares the node's condition, taint value ("" for none) and replacement request with
// what is wanted, and answers the node.
func checkNode(ctx context.Context, t *testing.T, client kubernetes.Interface, name string, status corev1.ConditionStatus, taint string, replace bool) *corev1.Node {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := condition(n); got.Status != status {
		t.Errorf("condition %s = %+v, want status %s", ConditionType, got, status)
	}
	have := ""
	for _, tn := range n.Spec.Taints {
		if tn.Key == TaintKey {
			have = tn.Value
			if tn.Effect != corev1.TaintEffectNoSchedule {
				t.Errorf("taint %+v, want NoSchedule (a NoExecute taint skips the budgets)", tn)
			}
		}
	}
	if have != taint {
		t.Errorf("taint %s = %q, want %q", TaintKey, have, taint)
	}
	if _, ok := n.Annotations[ReplaceAnnotation]; ok != replace {
		t.Errorf("annotation %s present = %v, want %v", ReplaceAnnotation, ok, replace)
	}
	return n
}

func condition(n *corev1.Node) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == ConditionType {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func mustCreate(t *testing.T, what string, fn func() error) {
	t.Helper()
	if err := fn(); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("%s: %v", what, err)
	}
}

func waitFor(t *testing.T, what string, ok func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		done, err := ok()
		if done {
			return
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: %v", what, last)
}
