package clustertest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// bundleKeyRE is a bundle's object key as a stub names it (upload.KeyFor).
var bundleKeyRE = regexp.MustCompile(`/[0-9a-f]{64}\.tar\.gz`)

// checkBootedFromBundles: every node the agent registered has, as ECS holds it, a user data
// that is the bundle stub alone (s.bundles): at most bundle.MaxStubBytes, naming one bundle, with
// no PEM block and no kubeadm configuration. The agent registers a stub's node only once it
// fetched the bundle as the instance's RAM role, so with the cluster formed (checkClusterWorks),
// every node booted from its bundle. It returns the nodes' bundles.
func (s *stack) checkBootedFromBundles(t *testing.T) []nodeBundle {
	t.Helper()
	nodes := s.bundles(t)
	for _, b := range nodes {
		doc, st := b.userData, b.status
		t.Logf("node %s (%s, %s): user data %d bytes (stub limit %d)", st.Node, st.InstanceID, st.Role, len(doc), bundle.MaxStubBytes)
		switch {
		case len(doc) > bundle.MaxStubBytes:
			t.Errorf("node %s (%s): user data of %d bytes, want the stub alone (at most %d)", st.Node, st.InstanceID, len(doc), bundle.MaxStubBytes)
		case !strings.Contains(doc, bundle.FetchScriptPath) || len(bundleKeyRE.FindAllString(doc, -1)) != 1:
			t.Errorf("node %s (%s): the user data is not a stub naming one bundle:\n%.1500s", st.Node, st.InstanceID, doc)
		case strings.Contains(doc, "-----BEGIN") || strings.Contains(doc, bootstrap.KubeadmPath):
			t.Errorf("node %s (%s): the user data carries a PEM block or the kubeadm configuration", st.Node, st.InstanceID)
		}
	}
	return nodes
}

// initAddons are the add-on objects the first control-plane node applied (waiting up to a
// minute for its add-on unit to have run).
func (s *stack) initAddons(t *testing.T) []nodeagent.AddonResult {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, st := range s.agent.Statuses() {
			if st.Role == nodeagent.RoleInit && len(st.Addons) > 0 {
				return st.Addons
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatal("the first control-plane node applied no add-ons")
	return nil
}

// checkMPIOperator: the add-ons the first control-plane node applied (its bundle's, played by
// the node agent) hold the MPI Operator with its CRD exactly when the scenario asks for MPI (the
// simulation scenarios, with bundles on), every object of it applied, and the API server
// serves MPIJobs (the CRD is Established).
func (s *stack) checkMPIOperator(t *testing.T, want bool) {
	t.Helper()
	applied := s.initAddons(t)
	var mpi []string
	for _, r := range applied {
		if r.File != manifests.AddonMPIOperator {
			continue
		}
		mpi = append(mpi, r.Object)
		if r.Error != "" {
			t.Errorf("add-on %s %s: %s", r.File, r.Object, r.Error)
		}
	}
	t.Logf("%d add-on objects applied, %d of them %s: %v", len(applied), len(mpi), manifests.AddonMPIOperator, mpi)
	if !want {
		if len(mpi) > 0 {
			t.Errorf("the scenario asks for no MPI, yet %s was applied: %v", manifests.AddonMPIOperator, mpi)
		}
		return
	}
	for _, obj := range []string{"CustomResourceDefinition " + manifests.MPIJobCRDName, "Deployment " + manifests.MPIOperatorNamespace + "/" + manifests.MPIOperatorName} {
		if !slices.Contains(mpi, obj) {
			t.Errorf("%s is not among the applied add-ons of %s", obj, manifests.AddonMPIOperator)
		}
	}
	dyn, err := dynamic.NewForConfig(s.cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := dyn.Resource(crds).Get(t.Context(), manifests.MPIJobCRDName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the MPIJob CRD: %v", err)
	}
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	established := slices.ContainsFunc(conditions, func(c any) bool {
		m, _ := c.(map[string]any)
		return m["type"] == "Established" && m["status"] == "True"
	})
	if !established {
		t.Errorf("the MPIJob CRD is not Established: %v", conditions)
	}
	// The operator's pod must find a node: every node of the scenario's layout is tainted (the
	// control plane's node-role taint, the GPU workers' nvidia.com/gpu), so a Deployment that
	// tolerates none stays Pending and no MPIJob ever starts.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // bounds a hang, measures nothing
	defer cancel()
	waitUntil(ctx, t, "the MPI Operator's pod to run on a node", func(ctx context.Context) (bool, error) {
		pods, err := s.cluster.Client().CoreV1().Pods(manifests.MPIOperatorNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var seen []string
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
				return true, nil
			}
			for _, c := range p.Status.Conditions {
				seen = append(seen, p.Name+" "+string(c.Type)+"="+string(c.Status)+" "+c.Message)
			}
		}
		return false, fmt.Errorf("no pod of %s runs: %v", manifests.MPIOperatorName, seen)
	})
}
