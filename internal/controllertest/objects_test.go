package controllertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

var (
	mpiJobGVR   = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}
	workloadGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	cqGVR       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
)

// The MPI Operator's pod labels (pkg/apis/kubeflow/v2beta1/constants.go at MPIOperatorVersion).
const (
	mpiJobNameLabel = "training.kubeflow.org/job-name"
	mpiJobRoleLabel = "training.kubeflow.org/job-role"
)

// apply creates one rendered document, mapping its kind to a resource through discovery (asked
// again for each document: CRDs are installed as the test goes).
func apply(t *testing.T, c *offlinekube.Cluster, d manifests.Document) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(d.YAML), &obj.Object); err != nil {
		t.Fatalf("%s %s: %v", d.Kind, d.Name, err)
	}
	create(t, c, obj)
}

func create(t *testing.T, c *offlinekube.Cluster, obj *unstructured.Unstructured) {
	t.Helper()
	groups, err := restmapper.GetAPIGroupResources(c.Client().Discovery())
	if err != nil {
		t.Fatal(err)
	}
	gvk := obj.GroupVersionKind()
	mapping, err := restmapper.NewDiscoveryRESTMapper(groups).RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s %s: %v", gvk, obj.GetName(), err)
	}
	var ri dynamic.ResourceInterface = dyn(c).Resource(mapping.Resource)
	if ns := obj.GetNamespace(); ns != "" {
		ri = dyn(c).Resource(mapping.Resource).Namespace(ns)
	}
	if _, err := ri.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s/%s: %v", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
}

func dyn(c *offlinekube.Cluster) dynamic.Interface { return dynamic.NewForConfigOrDie(c.RESTConfig()) }

// addGPUNodes creates the pool's nodes the way a GPU worker registers (the pool label, the GPU
// taint bootstrap sets, the GPUs the device plugin reports) for kwok to keep Ready, and one
// CPU-only node outside every pool, where no worker may land.
func addGPUNodes(t *testing.T, c *offlinekube.Cluster, pool manifests.Pool) {
	t.Helper()
	node := func(name string, labels map[string]string, taints []corev1.Taint, gpus int) *corev1.Node {
		capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"), corev1.ResourcePods: resource.MustParse("110")}
		if gpus > 0 {
			capacity[manifests.GPUResource] = resource.MustParse(fmt.Sprint(gpus))
		}
		labels["kubernetes.io/hostname"] = name
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{offlinekube.KwokNodeAnnotation: "fake"}},
			Spec:       corev1.NodeSpec{Taints: taints},
			Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
	}
	nodes := []*corev1.Node{node("cpu-0", map[string]string{}, nil, 0)}
	for i := range pool.Nodes {
		nodes = append(nodes, node(fmt.Sprintf("%s-%d", pool.Name, i), map[string]string{manifests.PoolLabel: pool.Name},
			[]corev1.Taint{{Key: bootstrap.GPUTaintKey, Effect: corev1.TaintEffect(bootstrap.GPUTaintEffect)}}, pool.GPUsPerNode))
	}
	for _, n := range nodes {
		if _, err := c.Client().CoreV1().Nodes().Create(t.Context(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		waitFor(t, "node "+n.Name+" Ready", func(ctx context.Context) (bool, error) {
			got, err := c.Client().CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return slices.ContainsFunc(got.Status.Conditions, func(c corev1.NodeCondition) bool {
				return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
			}), nil
		})
	}
}

// teamJob is the rendered molecular-dynamics MPIJob of r's job team, named name, with workers
// workers of a whole node's GPUs each, and its input ConfigMap. The launcher carries
// offlinekube.RunUntilDeletedLabel: kwok would complete its pod (a Job's) 45 s after it runs, and
// the job must hold its quota until the test deletes it or Kueue evicts it.
func teamJob(t *testing.T, r manifests.MPIRender, name string, workers int) (cm, job *unstructured.Unstructured) {
	t.Helper()
	for _, d := range r.MolecularDynamics {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(d.YAML, manifests.MolecularDynamicsJobName, name)), &obj.Object); err != nil {
			t.Fatal(err)
		}
		switch d.Kind {
		case "ConfigMap":
			cm = obj
		case "MPIJob":
			job = obj
		}
	}
	if cm == nil || job == nil {
		t.Fatalf("the rendered molecular-dynamics documents hold no ConfigMap and MPIJob: %v", r.MolecularDynamics)
	}
	specs := []string{"spec", "mpiReplicaSpecs"}
	if err := unstructured.SetNestedField(job.Object, int64(workers), append(specs, "Worker", "replicas")...); err != nil {
		t.Fatal(err)
	}
	labels, _, _ := unstructured.NestedStringMap(job.Object, append(specs, "Launcher", "template", "metadata", "labels")...)
	labels[offlinekube.RunUntilDeletedLabel] = "true"
	if err := unstructured.SetNestedStringMap(job.Object, labels, append(specs, "Launcher", "template", "metadata", "labels")...); err != nil {
		t.Fatal(err)
	}
	return cm, job
}

// workloadOf is the Kueue Workload owned by the MPIJob namespace/name, or nil.
func workloadOf(ctx context.Context, c *offlinekube.Cluster, namespace, name string) (*unstructured.Unstructured, error) {
	list, err := dyn(c).Resource(workloadGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, o := range list.Items[i].GetOwnerReferences() {
			if o.Kind == "MPIJob" && o.Name == name {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// condition returns the status and message of obj's status condition typ ("" when absent).
func condition(obj *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

func hasCondition(obj *unstructured.Unstructured, typ, status string) bool {
	s, _, _ := condition(obj, typ)
	return s == status
}

func suspended(job *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedBool(job.Object, "spec", "runPolicy", "suspend")
	return s
}

// jobPods are the pods the MPI Operator (workers) and the Job controller (the launcher) made for
// the MPIJob namespace/name.
func jobPods(ctx context.Context, c *offlinekube.Cluster, namespace, name string) ([]corev1.Pod, error) {
	list, err := c.Client().CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: mpiJobNameLabel + "=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func describePods(pods []corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		parts = append(parts, fmt.Sprintf("%s (%s) on %q %s", p.Name, p.Labels[mpiJobRoleLabel], p.Spec.NodeName, p.Status.Phase))
	}
	return strings.Join(parts, ", ")
}
