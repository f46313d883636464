// Package clusterreport sums up what the offline Kubernetes made of an applied stack: how many of
// the instances became Ready nodes, how many validation pods the scheduler put on GPU nodes, and
// why each of the others did not. `make demo-cluster` prints its Line; the scenario cluster tests
// read its fields.
package clusterreport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// GPUResource is the extended resource a GPU node advertises.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// Instance is what the emulator's node agent says of one Running instance: the Node it
// registered, or why it did not.
type Instance struct {
	ID     string `json:"instance_id"`
	Node   string `json:"node,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Summary is the state of the cluster after apply.
type Summary struct {
	// Instances is how many Running instances there are; Ready how many are Ready Nodes.
	Instances, Ready int
	// ValidationPods are the pods of the validation Jobs; OnGPUNodes how many are bound to a GPU
	// node.
	ValidationPods, OnGPUNodes int
	// GPUNodes are the registered Nodes advertising nvidia.com/gpu, by name.
	GPUNodes map[string]*corev1.Node
	// Reasons: one line per instance that is not a Ready node and per validation pod not on a
	// GPU node.
	Reasons []string
}

// Line is the one-line verdict `make demo-cluster` ends with.
func (s Summary) Line() string {
	return fmt.Sprintf("kubernetes: %d/%d nodes Ready, %d/%d validation pods scheduled on GPU nodes",
		s.Ready, s.Instances, s.OnGPUNodes, s.ValidationPods)
}

// Collect reads the nodes and the validation pods (pods of Jobs in the workload namespace) from
// the API server and matches the nodes with the agent's instances.
func Collect(ctx context.Context, client kubernetes.Interface, instances []Instance) (Summary, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Summary{}, fmt.Errorf("listing nodes: %w", err)
	}
	s := Summary{Instances: len(instances), GPUNodes: map[string]*corev1.Node{}}
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		byName[n.Name] = n
		if q, ok := n.Status.Capacity[GPUResource]; ok && !q.IsZero() {
			s.GPUNodes[n.Name] = n
		}
	}
	for _, in := range slices.SortedFunc(slices.Values(instances), func(a, b Instance) int { return strings.Compare(a.ID, b.ID) }) {
		switch n := byName[in.Node]; {
		case in.Node == "":
			s.Reasons = append(s.Reasons, fmt.Sprintf("instance %s: not registered: %s", in.ID, in.Reason))
		case n == nil:
			s.Reasons = append(s.Reasons, fmt.Sprintf("instance %s: node %s is not in the API server", in.ID, in.Node))
		case !Ready(n):
			s.Reasons = append(s.Reasons, fmt.Sprintf("instance %s: node %s is not Ready", in.ID, in.Node))
		default:
			s.Ready++
		}
	}
	pods, err := client.CoreV1().Pods(manifests.DefaultWorkloadNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return Summary{}, fmt.Errorf("listing pods in %s: %w", manifests.DefaultWorkloadNamespace, err)
	}
	for _, p := range ValidationPods(pods.Items) {
		s.ValidationPods++
		switch {
		case p.Spec.NodeName == "":
			s.Reasons = append(s.Reasons, fmt.Sprintf("pod %s: not scheduled: %s", p.Name, unscheduledReason(p)))
		case s.GPUNodes[p.Spec.NodeName] == nil:
			s.Reasons = append(s.Reasons, fmt.Sprintf("pod %s: on %s, which is no GPU node", p.Name, p.Spec.NodeName))
		default:
			s.OnGPUNodes++
		}
	}
	return s, nil
}

// ValidationPods are the pods created by Jobs (the validation Jobs; the workload templates are
// created suspended and have none), sorted by name.
func ValidationPods(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "Job" }) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Ready reports whether the node's Ready condition is True.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// unscheduledReason is the scheduler's message on the pod, or that it has not looked yet.
func unscheduledReason(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Message
		}
	}
	return "the scheduler has not placed it yet"
}

// Converged reports whether want instances (every one the agent reports, when want is 0) are
// Ready nodes and every validation pod is, or was, on a GPU node.
func (s Summary) Converged(want int) bool {
	if want == 0 {
		want = s.Instances
	}
	return want > 0 && s.Instances == want && s.Ready == want && s.ValidationPods > 0 && s.OnGPUNodes == s.ValidationPods
}

// Wait collects a summary every half second until it has Converged or ctx ends. It returns the
// last summary, and when the cluster did not converge an error with its Line and Reasons.
func Wait(ctx context.Context, client kubernetes.Interface, instances func() ([]Instance, error), want int) (Summary, error) {
	for {
		var sum Summary
		in, err := instances()
		if err == nil {
			sum, err = Collect(ctx, client, in)
		}
		if err == nil && sum.Converged(want) {
			return sum, nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return sum, fmt.Errorf("the cluster did not converge: %w", err)
			}
			return sum, fmt.Errorf("the cluster did not converge: %s\n%s", sum.Line(), strings.Join(sum.Reasons, "\n"))
		case <-time.After(500 * time.Millisecond):
		}
	}
}
