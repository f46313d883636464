package clusterreport

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

func node(name string, gpus int64, ready bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{}}}
	if gpus > 0 {
		n.Status.Capacity[GPUResource] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	return n
}

func jobPod(name, nodeName, message string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: manifests.DefaultWorkloadNamespace,
		OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "nccl-all-reduce-pool", APIVersion: "batch/v1", UID: "u"}}},
		Spec: corev1.PodSpec{NodeName: nodeName}}
	if message != "" {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: message}}
	}
	return p
}

func TestCollect(t *testing.T) {
	client := fake.NewClientset(
		node("cp", 0, true), node("gpu-a", 8, true), node("gpu-b", 8, false),
		jobPod("ar-0", "gpu-a", ""), jobPod("ar-1", "", "0/3 nodes are available: 1 Insufficient nvidia.com/gpu"), jobPod("ar-2", "cp", ""),
		// Not a validation pod: no Job owns it.
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "free", Namespace: manifests.DefaultWorkloadNamespace}, Spec: corev1.PodSpec{NodeName: "gpu-a"}},
	)
	s, err := Collect(context.Background(), client, []Instance{
		{ID: "i-1", Node: "cp"}, {ID: "i-2", Node: "gpu-a"}, {ID: "i-3", Node: "gpu-b"},
		{ID: "i-4", Reason: "no route to the internet"}, {ID: "i-5", Node: "gone"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Line(), "kubernetes: 2/5 nodes Ready, 1/3 validation pods scheduled on GPU nodes"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
	reasons := strings.Join(s.Reasons, "\n")
	for _, want := range []string{
		"instance i-3: node gpu-b is not Ready", "instance i-4: not registered: no route to the internet",
		"instance i-5: node gone is not in the API server", "pod ar-1: not scheduled: 0/3 nodes are available",
		"pod ar-2: on cp, which is no GPU node",
	} {
		if !strings.Contains(reasons, want) {
			t.Errorf("reasons lack %q:\n%s", want, reasons)
		}
	}
	if len(s.Reasons) != 5 || len(s.GPUNodes) != 2 {
		t.Errorf("%d reasons, %d GPU nodes; want 5 and 2:\n%s", len(s.Reasons), len(s.GPUNodes), reasons)
	}
}
