package nodeagent

// A node that leaves (issue #34). The kubelet's graceful node shutdown
// (https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/#graceful-node-shutdown):
// with shutdownGracePeriod set, the kubelet takes a systemd inhibitor lock that delays the
// machine's shutdown by up to that period; when the shutdown comes (a normal ECS StopInstances is
// an ACPI shutdown of the guest, ForceStop a power-off it never sees:
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-stopinstances)
// it sets the node NotReady with "node is shutting down", so nothing more is scheduled there,
// terminates the regular pods within shutdownGracePeriod - shutdownGracePeriodCriticalPods and
// then the critical ones within the rest, each within its own terminationGracePeriodSeconds at
// most, and marks each pod Failed, reason Terminated, with the DisruptionTarget condition of
// reason TerminationByKubelet. Then the machine goes down. A Job's controller replaces a Failed
// pod; a workload controller replaces its pods likewise.
//
// Without the setting (0, the kubelet's default) the feature does nothing: the pods die with the
// machine and the API server still shows them running on a node that no longer answers. When
// such an instance is released, or any instance whose node still runs pods is (DeleteInstances
// with Force on a Running instance), its pods were killed mid-run without eviction: the agent
// counts that as a failure of whoever deleted it (Failures, GET /_emulator/nodes).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// ShutdownSettings are the kubelet's graceful node shutdown settings (KubeletConfiguration
// shutdownGracePeriod and shutdownGracePeriodCriticalPods).
type ShutdownSettings struct {
	GracePeriod, CriticalPods time.Duration
}

// Shutdown messages and reasons, as the kubelet writes them (pkg/kubelet/nodeshutdown,
// https://github.com/kubernetes/kubernetes/blob/v1.31.0/pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go).
const (
	nodeShuttingDownMessage = "node is shutting down"
	podShutdownReason       = "Terminated"
	podShutdownMessage      = "Pod was terminated in response to imminent node shutdown."
	// systemCriticalPriority is the priority from which the kubelet counts a pod critical
	// (system-cluster-critical, scheduling.SystemCriticalPriority).
	systemCriticalPriority = int32(2000000000)
	// sigtermExitCode is what a container that exits on SIGTERM reports (128 + 15); our
	// assumption for a container that stops within its grace period.
	sigtermExitCode = 143
)

// ShutdownReport is what one graceful node shutdown did.
type ShutdownReport struct {
	// Terminated are the pods terminated, namespace/name, in the order the kubelet did.
	Terminated []string `json:"terminated,omitempty"`
	// ModeledSeconds is how long the shutdown held the machine: per group (regular pods, then
	// critical), the longest of min(its pods' terminationGracePeriodSeconds, the group's period).
	ModeledSeconds float64 `json:"modeled_seconds"`
}

// Failure is something a node's instance went through that the real cluster would suffer.
type Failure struct {
	InstanceID string `json:"instance_id"`
	Node       string `json:"node"`
	Reason     string `json:"reason"`
}

// readShutdown reads the graceful node shutdown settings from the KubeletConfiguration documents
// of files (kubeletConfigs). ok is false when none sets them.
func readShutdown(files ...string) (s ShutdownSettings, ok bool, err error) {
	kcs, err := kubeletConfigs[struct {
		ShutdownGracePeriod             string `json:"shutdownGracePeriod"`
		ShutdownGracePeriodCriticalPods string `json:"shutdownGracePeriodCriticalPods"`
	}](files...)
	if err != nil {
		return s, false, err
	}
	for _, kc := range kcs {
		for _, f := range []struct {
			raw string
			to  *time.Duration
		}{{kc.ShutdownGracePeriod, &s.GracePeriod}, {kc.ShutdownGracePeriodCriticalPods, &s.CriticalPods}} {
			if f.raw == "" {
				continue
			}
			if *f.to, err = time.ParseDuration(f.raw); err != nil {
				return s, false, fmt.Errorf("KubeletConfiguration: %w", err)
			}
			ok = true
		}
	}
	return s, ok, nil
}

// kubeletConfigs are the KubeletConfiguration documents of files, each read into a T, in order
// (kubeadm's configuration of a first node, then a joining node's kubeletconfiguration patch: a
// later one overrides).
func kubeletConfigs[T any](files ...string) ([]T, error) {
	var out []T
	for _, f := range files {
		for _, doc := range splitYAML(f) {
			var kind struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
				return nil, fmt.Errorf("kubelet configuration is not YAML: %w", err)
			}
			if kind.Kind != "KubeletConfiguration" {
				continue
			}
			var v T
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				return nil, fmt.Errorf("KubeletConfiguration: %w", err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// shutdownOf is the node's settings (kubeletSetting), by default the kubelet's (0: no graceful
// shutdown).
func (a *Agent) shutdownOf(p NodePlan) ShutdownSettings {
	return kubeletSetting(a, p, func(p NodePlan) *ShutdownSettings { return p.Shutdown }, ShutdownSettings{})
}

// kubeletSetting is one of a node's kubelet settings: its own files', else its cluster's (a
// joining node without a patch takes the kubelet-config its cluster's first node uploaded), else
// def.
func kubeletSetting[T any](a *Agent, p NodePlan, of func(NodePlan) *T, def T) T {
	if v := of(p); v != nil {
		return *v
	}
	if c := a.cluster; c != nil {
		if v := of(a.plans[c.initID].plan); v != nil {
			return *v
		}
	}
	return def
}

// holdShutdown tells the emulator that the registered node's guest delays a normal shutdown by
// its grace period, as its kubelet's inhibitor lock does; only when the agent can power the
// guest off again.
func (a *Agent) holdShutdown(id string, p NodePlan) {
	if s := a.shutdownOf(p); s.GracePeriod > 0 && a.delayShutdown != nil && a.powerOff != nil {
		a.delayShutdown(id, s.GracePeriod)
	}
}

// DelayShutdownWith makes the agent tell the emulator (Server.DelayGuestShutdown) that a node
// with graceful node shutdown delays a normal stop, and end the delay (PowerOffWith) once its
// pods are terminated. Call it before Run, with PowerOffWith.
func (a *Agent) DelayShutdownWith(delay func(instanceID string, d time.Duration)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.delayShutdown = delay
}

// nodeShutdown is a graceful node shutdown a round started, for Sync to play.
type nodeShutdown struct {
	id, name string
	settings ShutdownSettings
}

// followShutdown starts the kubelet's graceful shutdown (appended to start) on a node whose
// instance a normal StopInstances signalled, once; it forgets the shutdown when the instance runs
// again. It answers what the shutdown did (nil: none, or not done yet) and whether it is under
// way. Caller holds a.mu.
func (a *Agent) followShutdown(in *emulator.InstanceView, name string, start *[]nodeShutdown) (*ShutdownReport, bool) {
	if in.Status == "Running" {
		delete(a.shutDown, in.ID)
		return nil, false
	}
	if rep, known := a.shutDown[in.ID]; known {
		return rep, rep == nil
	}
	if !in.ShutdownSignalled || a.powerOff == nil {
		return nil, false
	}
	a.shutDown[in.ID] = nil
	*start = append(*start, nodeShutdown{id: in.ID, name: name, settings: a.shutdownOf(a.plans[in.ID].plan)})
	return nil, true
}

// shutdown plays a graceful node shutdown followShutdown started and powers the guest off after.
// It runs without a.mu: waiting for the not-ready taint and terminating the pods takes the API
// up to half a minute, during which /_emulator/nodes still answers.
func (a *Agent) shutdown(ctx context.Context, sd nodeShutdown) {
	rep, err := a.kube.ShutdownNode(ctx, sd.name, sd.settings)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.logf("nodeagent: graceful shutdown of node %s (%s): %v", sd.name, sd.id, err)
		delete(a.shutDown, sd.id) // tried again next round; the emulator ends the delay by itself at worst
		return
	}
	if a.registered[sd.id] == "" {
		return // released meanwhile
	}
	a.shutDown[sd.id] = &rep
	for _, p := range rep.Terminated {
		a.shutdownTerminated = append(a.shutdownTerminated, p+" on "+sd.name)
	}
	a.logf("nodeagent: node %s (%s) shut down gracefully: %s", sd.name, sd.id, rep.line())
	a.powerOff(sd.id)
	if st, ok := a.statuses[sd.id]; ok {
		st.Shutdown = &rep
		a.statuses[sd.id] = st
	}
}

func (r ShutdownReport) line() string {
	return fmt.Sprintf("%d pods terminated (%s) in a modeled %.0f s", len(r.Terminated), strings.Join(r.Terminated, ", "), r.ModeledSeconds)
}

// releasedWithPods opens checkReleased's failure.
const releasedWithPods = "deleted while running"

// checkReleased records a failure when a released instance's node still ran pods: they were
// killed without eviction. DaemonSet pods and the node's own (mirror) pods go with any node.
// Once per instance: forgetGone checks again in every round until it deletes the Node. Only
// this check's own failure stands for it: an earlier one of the node (a certificate that
// lapsed) says nothing of the pods it ran when released.
func (a *Agent) checkReleased(ctx context.Context, id, name string) error {
	if slices.ContainsFunc(a.failures, func(f Failure) bool { return f.InstanceID == id && strings.HasPrefix(f.Reason, releasedWithPods) }) {
		return nil
	}
	pods, err := a.kube.PodsRunningOn(ctx, name)
	if err != nil {
		return err
	}
	if len(pods) > 0 {
		f := Failure{InstanceID: id, Node: name, Reason: fmt.Sprintf(releasedWithPods+" %d pods: %s: they were killed mid-run, not evicted; "+
			"stop the instance normally first (StopInstances without ForceStop) so that the kubelet's graceful node shutdown terminates them, or drain the node",
			len(pods), strings.Join(pods, ", "))}
		a.failures = append(a.failures, f)
		a.logf("nodeagent: FAILURE: instance %s (node %s) %s", id, name, f.Reason)
	}
	return nil
}

// ShutdownTerminated lists the pods graceful node shutdowns terminated, in order, "namespace/name
// on node": pods that left their node without the Eviction API, so without their
// PodDisruptionBudget being asked.
func (a *Agent) ShutdownTerminated() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.shutdownTerminated)
}

// Failures lists what the agent counted as failures, in the order they happened.
func (a *Agent) Failures() []Failure {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.failures)
}

// ShutdownNode plays the kubelet's graceful node shutdown (see the top of this file): the node
// leaves kwok (which would otherwise keep it Ready) and is NotReady with "node is shutting down";
// once the node lifecycle controller has tainted it not-ready (the scheduler places nothing more
// there) its pods are terminated, regular ones first, and marked as the kubelet marks them.
func (k *clientKube) ShutdownNode(ctx context.Context, name string, s ShutdownSettings) (ShutdownReport, error) {
	if err := k.setKwokOwner(ctx, name, "shutting-down"); err != nil {
		return ShutdownReport{}, err
	}
	nodes := k.cs.CoreV1().Nodes()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		setCondition(&cur.Status, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
			Message: nodeShuttingDownMessage, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()})
		_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if err != nil {
		return ShutdownReport{}, err
	}
	k.waitNotReadyTaint(ctx, name)
	pods, err := k.podsOn(ctx, name)
	if err != nil {
		return ShutdownReport{}, err
	}
	order, seconds := shutdownOrder(pods, s)
	rep := ShutdownReport{ModeledSeconds: seconds}
	for i := range order {
		if err := k.terminate(ctx, &order[i]); err != nil {
			return rep, err
		}
		rep.Terminated = append(rep.Terminated, order[i].Namespace+"/"+order[i].Name)
	}
	return rep, nil
}

// shutdownOrder is the kubelet's order over a node's pods that have not ended: the regular ones,
// then the critical ones (priority system-cluster-critical and up), and the time the shutdown
// takes: per group, the longest of min(a pod's terminationGracePeriodSeconds, the group's period:
// shutdownGracePeriod - shutdownGracePeriodCriticalPods for the regular pods, the rest for the
// critical ones), the groups one after the other.
func shutdownOrder(pods []corev1.Pod, s ShutdownSettings) (order []corev1.Pod, seconds float64) {
	var regular, critical []corev1.Pod
	for _, p := range pods {
		if podEnded(&p) {
			continue
		}
		if p.Spec.Priority != nil && *p.Spec.Priority >= systemCriticalPriority {
			critical = append(critical, p)
		} else {
			regular = append(regular, p)
		}
	}
	for _, g := range []struct {
		pods   []corev1.Pod
		period time.Duration
	}{{regular, s.GracePeriod - s.CriticalPods}, {critical, s.CriticalPods}} {
		longest := time.Duration(0)
		for i := range g.pods {
			longest = max(longest, min(podGrace(&g.pods[i]), g.period))
		}
		order = append(order, g.pods...)
		seconds += longest.Seconds()
	}
	return order, seconds
}

// podGrace is the pod's terminationGracePeriodSeconds (30 when unset, the API's default).
func podGrace(p *corev1.Pod) time.Duration {
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return 30 * time.Second
}

// waitNotReadyTaint waits, briefly, for the node lifecycle controller to taint the NotReady node:
// on the real node the pods' own grace periods give it that time.
func (k *clientKube) waitNotReadyTaint(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		n, err := k.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil && slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady }) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// terminate marks a pod as the kubelet's shutdown manager leaves it: Failed, reason Terminated,
// the DisruptionTarget condition (reason TerminationByKubelet), its containers terminated.
func (k *clientKube) terminate(ctx context.Context, p *corev1.Pod) error {
	pods := k.cs.CoreV1().Pods(p.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase, cur.Status.Reason, cur.Status.Message = corev1.PodFailed, podShutdownReason, podShutdownMessage
		cur.Status.Conditions = slices.DeleteFunc(cur.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget })
		cur.Status.Conditions = append(cur.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: corev1.PodReasonTerminationByKubelet, Message: podShutdownMessage, LastTransitionTime: now})
		for i := range cur.Status.Conditions {
			if c := &cur.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				c.Status, c.LastTransitionTime = corev1.ConditionFalse, now
			}
		}
		for i := range cur.Status.ContainerStatuses {
			cs := &cur.Status.ContainerStatuses[i]
			started := now
			if cs.State.Running != nil {
				started = cs.State.Running.StartedAt
			}
			cs.Ready, cs.State = false, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: sigtermExitCode, Reason: "Error", StartedAt: started, FinishedAt: now}}
		}
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
}

// PodsRunningOn lists the pods bound to the node that have not ended (namespace/name), but for
// DaemonSet pods and the node's own mirror pods.
func (k *clientKube) PodsRunningOn(ctx context.Context, name string) ([]string, error) {
	pods, err := k.podsOn(ctx, name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		if podEnded(&p) {
			continue
		}
		if goesWithItsNode(&p) {
			continue
		}
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out, nil
}

// goesWithItsNode: a DaemonSet's pod (its controller puts it back on the node at once) or the
// node's own static pod, whose mirror the kubelet owns (owner kind Node, the mirror annotation).
// Neither is evicted by a drain, and neither is lost when the node goes.
func goesWithItsNode(p *corev1.Pod) bool {
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return true
	}
	return slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "DaemonSet" || o.Kind == "Node" })
}

// podsOn lists the pods bound to the node.
func (k *clientKube) podsOn(ctx context.Context, name string) ([]corev1.Pod, error) {
	list, err := k.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// podEnded: the pod is Succeeded or Failed, so neither a shutdown nor a deletion stops it.
func podEnded(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
