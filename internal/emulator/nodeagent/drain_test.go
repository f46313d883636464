package nodeagent

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// testReplacedNodeDrains (issue #34): a Job's pod runs on a GPU node of a pool; the node pool
// removes that node as a shrink or a roll wave does (nodepool.RemoveNodes: a normal stop, then
// the delete). The node's kubelet, with the graceful node shutdown its bootstrap configures,
// terminates the pod (Failed, reason Terminated, DisruptionTarget TerminationByKubelet) and the
// real Job controller starts a replacement that the real scheduler puts on another node; the agent
// counts no failure. Then a node is deleted without the stop (DeleteInstances with Force, what the
// pool did before), and the agent counts that: deleted while running the Job's pod.
func testReplacedNodeDrains(t *testing.T, kube Kube, client kubernetes.Interface, ca clusterCA) {
	s := startCloud(t, true)
	cp := s.run(t, "ecs.g7.xlarge", "drain-cp-0", renderDoc(t, s.behind(firstControlPlane(ca))))
	s.backends(t, cp)
	ids := map[string]string{} // node name -> instance id
	all := []string{cp}
	for i := range 3 {
		name := fmt.Sprintf("drain-gpu-%d", i)
		ids[name] = s.run(t, "ecs.gn7i-c32g1.16xlarge", name, renderDoc(t, s.behind(gpuWorker(ca))))
		all = append(all, ids[name])
	}
	a := s.startAgent(t, kube)
	a.PowerOffWith(s.srv.PowerOffFromGuest)
	a.DelayShutdownWith(s.srv.DelayGuestShutdown)
	s.settle(t, a, all, registered)
	for name := range ids {
		waitReady(t, client, name)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { a.Run(ctx, 100*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	// The node pool's path: stopped normally, then deleted.
	nodes := slices.Sorted(maps.Keys(ids))
	first := runJob(t, client, "drain-graceful", nodes)
	removed := make(chan error, 1)
	go func() {
		warnings, err := nodepool.RemoveNodes(ctx, s.c, []string{ids[first.Spec.NodeName]})
		if err == nil && len(warnings) > 0 {
			err = fmt.Errorf("warnings %q", warnings)
		}
		removed <- err
	}()
	p := waitPod(t, client, first.Name, "terminated by the kubelet's graceful shutdown", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed
	})
	if p.Status.Reason != podShutdownReason || !slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonTerminationByKubelet
	}) {
		t.Errorf("pod %s: reason %q, conditions %+v; want Terminated with DisruptionTarget TerminationByKubelet", p.Name, p.Status.Reason, p.Status.Conditions)
	}
	if err := <-removed; err != nil {
		t.Fatalf("removing node %s: %v", first.Spec.NodeName, err)
	}
	waitNodeGone(t, client, first.Spec.NodeName)
	next := waitJobPod(t, client, "drain-graceful", first.Name)
	if next.Spec.NodeName == first.Spec.NodeName {
		t.Errorf("the replacement %s went to the removed node %s", next.Name, first.Spec.NodeName)
	}
	if f := a.Failures(); len(f) > 0 {
		t.Fatalf("the agent counted failures on the graceful path: %+v", f)
	}

	// Without the stop: the pod dies with its node, not evicted.
	second := runJob(t, client, "drain-forced", nodes)
	if err := s.c.DeleteInstances(t.Context(), []string{ids[second.Spec.NodeName]}); err != nil {
		t.Fatal(err)
	}
	waitNodeGone(t, client, second.Spec.NodeName)
	f := a.Failures()
	if len(f) != 1 || f[0].Node != second.Spec.NodeName {
		t.Fatalf("failures %+v, want one, of node %s", f, second.Spec.NodeName)
	}
	mustContain(t, "the failure", f[0].Reason, "deleted while running")
	mustContain(t, "the failure", f[0].Reason, "default/"+second.Name)
}

// runJob creates a Job of one pod that runs until it is stopped, on one of the GPU nodes (the
// cluster holds other scenarios' too), and returns its pod once Running.
func runJob(t *testing.T, client kubernetes.Interface, name string, nodes []string) *corev1.Pod {
	t.Helper()
	grace := int64(120)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{offlinekube.RunUntilDeletedLabel: "true"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
				Tolerations: []corev1.Toleration{{Key: bootstrap.GPUTaintKey, Operator: corev1.TolerationOpExists}},
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: nodes}}}}}}},
				Containers: []corev1.Container{{Name: "train", Image: "registry.k8s.io/pause:3.10"}}},
		}}}
	if _, err := client.BatchV1().Jobs("default").Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return waitJobPod(t, client, name, "")
}

// waitJobPod waits for a Running pod of the Job other than not, and returns it.
func waitJobPod(t *testing.T, client kubernetes.Interface, job, not string) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterStepTimeout)
	defer cancel()
	for {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
		if err == nil {
			for i := range list.Items {
				if p := &list.Items[i]; p.Name != not && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
					return p
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s: no Running pod but %q (%v)", job, not, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitPod waits until the pod satisfies ok and returns it.
func waitPod(t *testing.T, client kubernetes.Interface, name, what string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterStepTimeout)
	defer cancel()
	for {
		p, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && ok(p) {
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s not %s: %+v (%v)", name, what, p, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitNodeGone waits until the agent has deleted the node, as the cloud's node controller does
// once its instance is released.
func waitNodeGone(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterStepTimeout)
	defer cancel()
	for {
		_, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node %s still there (%v)", name, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
