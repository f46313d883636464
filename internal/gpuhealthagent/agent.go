package gpuhealthagent

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

// What the agent writes on its node.
const (
	ConditionType     corev1.NodeConditionType = health.UnhealthyCondition
	TaintKey                                   = health.UnhealthyTaintKey
	ReplaceAnnotation                          = health.ReplaceAnnotation
	// GPUResource is the extended resource the NVIDIA device plugin advertises.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"

	reasonHealthy = "GPUsHealthy"
)

// Agent acts for one node.
type Agent struct {
	Client kubernetes.Interface
	Node   string
	// Metrics answers dcgm-exporter's text exposition for the node.
	Metrics func(ctx context.Context) (string, error)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Replacer, when set, is asked for a new instance once a GPU that needs one has no GPU pod
	// left on the node; nil leaves the request annotation to the node's pool.
	Replacer Replacer
}

// Result is what one round did.
type Result struct {
	Findings []Finding
	Evicted  []string // namespace/name of the GPU pods whose eviction was accepted
	Blocked  []string // ... whose eviction a PodDisruptionBudget refused, tried again next round
	// Replaced: the Replacer accepted the request (the instance goes, a new one comes).
	Replaced bool
}

// Reconcile reads the GPUs and brings the node's condition, taint, annotation and GPU pods in
// line with them. Nothing is changed when the metrics cannot be read: a node is not drained on a
// read error.
func (a *Agent) Reconcile(ctx context.Context) (Result, error) {
	text, err := a.Metrics(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("reading dcgm-exporter: %w", err)
	}
	readings, err := ParseDCGM(text)
	if err != nil {
		return Result{}, err
	}
	res := Result{Findings: Assess(readings)}
	if err := a.setCondition(ctx, res.Findings); err != nil {
		return res, err
	}
	node, err := a.markNode(ctx, res.Findings)
	if err != nil {
		return res, err
	}
	if len(res.Findings) == 0 {
		return res, nil
	}
	var left int
	res.Evicted, res.Blocked, left, err = a.evictGPUPods(ctx)
	if err != nil || left > 0 || a.Replacer == nil {
		return res, err
	}
	action, why := worst(res.Findings)
	if action != health.ActionReplace {
		return res, nil
	}
	if err := a.Replacer.Replace(ctx, node, fmt.Sprintf("XID %d on GPU %s", why.XID, why.GPU)); err != nil {
		return res, fmt.Errorf("asking for a new instance for node %s: %w", a.Node, err)
	}
	res.Replaced = true
	return res, nil
}

// Run reconciles every interval until ctx ends, reporting each round's error to report (nil:
// dropped); a failed round changes nothing and the next one tries again.
func (a *Agent) Run(ctx context.Context, interval time.Duration, report func(Result, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		res, err := a.Reconcile(ctx)
		if report != nil {
			report(res, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *Agent) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// setCondition writes the GPUUnhealthy condition when its status, reason or message changes; its
// transition time moves only with the status, as the API's conventions ask.
func (a *Agent) setCondition(ctx context.Context, findings []Finding) error {
	want := corev1.NodeCondition{Type: ConditionType, Status: corev1.ConditionFalse, Reason: reasonHealthy,
		Message: "every GPU's last XID leaves it in service"}
	if action, w := worst(findings); action != "" {
		want.Status, want.Reason, want.Message = corev1.ConditionTrue, fmt.Sprintf("XID%d", w.XID), describe(findings)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := a.Client.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewTime(a.now())
		i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == ConditionType })
		if i >= 0 {
			have := node.Status.Conditions[i]
			if have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
				return nil
			}
			want.LastTransitionTime = have.LastTransitionTime
			if have.Status != want.Status {
				want.LastTransitionTime = now
			}
			want.LastHeartbeatTime = now
			node.Status.Conditions[i] = want
		} else {
			want.LastTransitionTime, want.LastHeartbeatTime = now, now
			node.Status.Conditions = append(node.Status.Conditions, want)
		}
		_, err = a.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

// markNode sets or clears the taint and the replacement request, and answers the node as it
// left it (the replacement reads its provider id from it). It touches nothing else of the
// node's spec: spec.unschedulable (a cordon) stays as a person left it.
func (a *Agent) markNode(ctx context.Context, findings []Finding) (*corev1.Node, error) {
	action, _ := worst(findings)
	var node *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		node, err = a.Client.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed := false
		i := slices.IndexFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == TaintKey })
		switch {
		case action == "" && i >= 0:
			node.Spec.Taints = slices.Delete(node.Spec.Taints, i, i+1)
			changed = true
		case action != "" && (i < 0 || node.Spec.Taints[i].Value != string(action)):
			taint := corev1.Taint{Key: TaintKey, Value: string(action), Effect: corev1.TaintEffectNoSchedule}
			if i < 0 {
				node.Spec.Taints = append(node.Spec.Taints, taint)
			} else {
				node.Spec.Taints[i] = taint
			}
			changed = true
		}
		_, requested := node.Annotations[ReplaceAnnotation]
		switch {
		case action == health.ActionReplace && !requested:
			if node.Annotations == nil {
				node.Annotations = map[string]string{}
			}
			node.Annotations[ReplaceAnnotation] = a.now().UTC().Format(time.RFC3339)
			changed = true
		case action != health.ActionReplace && requested:
			delete(node.Annotations, ReplaceAnnotation)
			changed = true
		}
		if !changed {
			return nil
		}
		node, err = a.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	return node, err
}

// evictGPUPods asks the Eviction API to evict each pod on the node that holds a GPU and is not
// ending already, and answers how many GPU pods are still on the node (running or ending). A
// DaemonSet's pod is left: its controller would put it straight back, and the device plugin and
// dcgm-exporter are what report the GPU.
func (a *Agent) evictGPUPods(ctx context.Context) (evicted, blocked []string, left int, err error) {
	pods, err := a.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + a.Node})
	if err != nil {
		return nil, nil, 0, err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || !holdsGPU(&p) || ownedByDaemonSet(&p) {
			continue
		}
		left++
		if p.DeletionTimestamp != nil {
			continue
		}
		name := p.Namespace + "/" + p.Name
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		switch err := a.Client.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev); {
		case err == nil:
			evicted = append(evicted, name)
		case apierrors.IsTooManyRequests(err):
			// The budget allows no disruption now (https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/:
			// 429 Too Many Requests); the next round asks again.
			blocked = append(blocked, name)
		case apierrors.IsNotFound(err):
			left--
		default:
			return evicted, blocked, left, fmt.Errorf("evicting %s: %w", name, err)
		}
	}
	return evicted, blocked, left, nil
}

func holdsGPU(p *corev1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[GPUResource]; ok && !q.IsZero() {
			return true
		}
		if q, ok := c.Resources.Requests[GPUResource]; ok && !q.IsZero() {
			return true
		}
	}
	return false
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
