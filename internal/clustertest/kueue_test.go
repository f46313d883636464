package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

var (
	localQueueGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: manifests.KueueAPIVersion[len("kueue.x-k8s.io/"):], Resource: "localqueues"}
	workloadGVR   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: localQueueGVR.Version, Resource: "workloads"}
)

// kueueQueueLabel is the label that puts a Job in a LocalQueue (Kueue's
// constants.QueueLabel at manifests.KueueVersion).
const kueueQueueLabel = "kueue.x-k8s.io/queue-name"

// checkKueue: exactly when the scenario asks for MPI, the first control-plane node applied the
// Kueue add-on, every object of it; its manager, which the offline cluster runs as the
// kueue-controller-manager pod's program, serves its webhooks (its certificate rotator wrote the
// caBundle of every webhook); a suspended Job labelled with a team's LocalQueue is admitted (its
// Workload Admitted, the Job unsuspended) and a Job without a queue label runs, both through
// Kueue's webhooks (failurePolicy Fail: no answer, no Job). The validation Jobs ran before
// (checkClusterWorks).
func (s *stack) checkKueue(t *testing.T, want bool) {
	t.Helper()
	var kueue int
	for _, r := range s.initAddons(t) {
		if r.File != manifests.AddonKueue {
			continue
		}
		kueue++
		if r.Error != "" {
			t.Errorf("add-on %s %s: %s", r.File, r.Object, r.Error)
		}
	}
	if !want {
		if kueue > 0 {
			t.Errorf("the scenario asks for no MPI, yet %d objects of %s were applied", kueue, manifests.AddonKueue)
		}
		return
	}
	if kueue == 0 {
		t.Fatalf("%s was not applied on the module's defaults", manifests.AddonKueue)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute) // bounds a hang, measures nothing
	defer cancel()
	client := s.cluster.Client()
	waitUntil(ctx, t, "every Kueue webhook to carry its manager's caBundle", func(ctx context.Context) (bool, error) {
		m, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "kueue-mutating-webhook-configuration", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		v, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "kueue-validating-webhook-configuration", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, w := range m.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return false, fmt.Errorf("mutating webhook %s has no caBundle yet", w.Name)
			}
		}
		for _, w := range v.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return false, fmt.Errorf("validating webhook %s has no caBundle yet", w.Name)
			}
		}
		return len(m.Webhooks) > 0 && len(v.Webhooks) > 0, nil
	})
	dyn, err := dynamic.NewForConfig(s.cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	queues, err := dyn.Resource(localQueueGVR).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil || len(queues.Items) == 0 {
		t.Fatalf("no LocalQueue in the cluster (%v)", err)
	}
	lq := queues.Items[0]
	// Created unsuspended: Kueue's defaulting webhook suspends a Job that names a queue
	// (jobframework.ApplyDefaultForSuspend, v0.17.0), so a suspended answer to the create shows
	// the API server called the manager through the pod network, not only that nothing refused.
	queued := gpuJob("kueue-admitted", lq.GetNamespace(), map[string]string{kueueQueueLabel: lq.GetName()})
	queued.Spec.Suspend = nil
	// Kueue's webhooks answer or nothing goes in: retried while the manager's webhook server
	// comes up after its certificate.
	var created *batchv1.Job
	waitUntil(ctx, t, "Job "+queued.Name+" to be accepted by Kueue's webhooks", func(ctx context.Context) (bool, error) {
		created, err = client.BatchV1().Jobs(queued.Namespace).Create(ctx, queued, metav1.CreateOptions{})
		return err == nil, err
	})
	if created.Spec.Suspend == nil || !*created.Spec.Suspend {
		t.Fatalf("Job %s/%s names LocalQueue %s but the create answered it unsuspended: Kueue's defaulting webhook did not run", queued.Namespace, queued.Name, lq.GetName())
	}
	waitUntil(ctx, t, "the Workload of Job "+queued.Name+" to be Admitted and the Job unsuspended", func(ctx context.Context) (bool, error) {
		list, err := dyn.Resource(workloadGVR).Namespace(queued.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, w := range list.Items {
			for _, o := range w.GetOwnerReferences() {
				if o.UID == created.UID && admitted(&w) {
					job, err := client.BatchV1().Jobs(queued.Namespace).Get(ctx, queued.Name, metav1.GetOptions{})
					return err == nil && job.Spec.Suspend != nil && !*job.Spec.Suspend, err
				}
			}
		}
		return false, fmt.Errorf("no admitted Workload of Job %s/%s among %d", queued.Namespace, queued.Name, len(list.Items))
	})
	plain := gpuJob("kueue-unqueued", metav1.NamespaceDefault, nil)
	plain.Spec.Suspend = nil
	if _, err := client.BatchV1().Jobs(plain.Namespace).Create(ctx, plain, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Job without a queue label: %v", err)
	}
	waitUntil(ctx, t, "Job "+plain.Name+" (no queue label) to run", func(ctx context.Context) (bool, error) {
		job, err := client.BatchV1().Jobs(plain.Namespace).Get(ctx, plain.Name, metav1.GetOptions{})
		return err == nil && (job.Status.Succeeded > 0 || job.Status.Ready != nil && *job.Status.Ready > 0), err
	})
	t.Logf("Kueue serves its webhooks: Job %s/%s admitted through LocalQueue %s, Job default/%s ran without a queue", queued.Namespace, queued.Name, lq.GetName(), plain.Name)
}

// gpuJob is a suspended one-pod Job that needs one GPU and tolerates the GPU workers' taint.
func gpuJob(name, namespace string, labels map[string]string) *batchv1.Job {
	suspend, one := true, int32(1)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: batchv1.JobSpec{Suspend: &suspend, Parallelism: &one, Completions: &one,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Tolerations:   []corev1.Toleration{{Key: bootstrap.GPUTaintKey, Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{Name: "main", Image: "busybox",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{manifests.GPUResource: resource.MustParse("1")}}}},
			}},
		},
	}
}

func admitted(w *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Admitted" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// waitUntil polls done until it says so, failing the test with the last reason it gave.
func waitUntil(ctx context.Context, t *testing.T, what string, done func(context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := done(ctx)
		if err != nil && ctx.Err() == nil { // keep the last answer, not the deadline's own error
			last = err
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last: %v)", what, err, last)
	}
}
