package gpuhealthagent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// TestAddonRBACIsExactlyTheAgentsCalls applies the add-on's ServiceAccount, ClusterRole and
// binding as rendered to a real API server (its RBAC authorizer) and runs the agent as that
// ServiceAccount through a failing GPU and its recovery: every call the agent makes is allowed.
// SubjectAccessReviews then show the account may do nothing beyond them: no delete, patch or
// create of nodes or pods, no cordon by patch, no secrets.
func TestAddonRBACIsExactlyTheAgentsCalls(t *testing.T) {
	kube := offlinekube.StartT(t, offlinekube.Options{})
	ctx := t.Context()
	admin := kube.Client()
	ns := applyAgentRBAC(t, admin)

	node := "gpu-0"
	gpuNode(ctx, t, admin, node)
	pod(ctx, t, admin, node, "trainer", "default", 1)
	waitFor(t, "pod trainer running", func() (bool, error) {
		got, err := admin.CoreV1().Pods("default").Get(ctx, "trainer", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning, err
	})

	config := kube.RESTConfig()
	config.Impersonate = rest.ImpersonationConfig{UserName: serviceAccountUser(ns),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	asAgent, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	exporter := &dcgmExporter{}
	agent := &Agent{Client: asAgent, Node: node, Metrics: exporter.text}
	exporter.set(0, 79)
	if res, err := agent.Reconcile(ctx); err != nil || !slices.Equal(res.Evicted, []string{"default/trainer"}) {
		t.Fatalf("failing round as the add-on's ServiceAccount: %+v, %v", res, err)
	}
	checkNode(ctx, t, admin, node, corev1.ConditionTrue, "replace", true)
	exporter.set(0, 0)
	if _, err := agent.Reconcile(ctx); err != nil {
		t.Fatalf("recovered round as the add-on's ServiceAccount: %v", err)
	}
	checkNode(ctx, t, admin, node, corev1.ConditionFalse, "", false)

	for _, a := range []authzv1.ResourceAttributes{
		{Verb: "delete", Resource: "nodes"}, {Verb: "patch", Resource: "nodes"}, {Verb: "create", Resource: "nodes"},
		{Verb: "list", Resource: "nodes"}, {Verb: "watch", Resource: "nodes"}, {Verb: "patch", Resource: "nodes", Subresource: "status"},
		{Verb: "delete", Resource: "pods", Namespace: "default"}, {Verb: "create", Resource: "pods", Namespace: "default"},
		{Verb: "update", Resource: "pods", Namespace: "default"}, {Verb: "get", Resource: "pods", Namespace: "default"},
		{Verb: "get", Resource: "secrets", Namespace: ns}, {Verb: "list", Resource: "secrets"},
		{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "default"},
		{Verb: "delete", Resource: "poddisruptionbudgets", Group: "policy", Namespace: "default"},
	} {
		if allowed(t, admin, ns, a) {
			t.Errorf("the agent's ServiceAccount may %s %s/%s (namespace %q): more than the agent calls", a.Verb, a.Resource, a.Subresource, a.Namespace)
		}
	}
}

// applyAgentRBAC creates the add-on's namespace, ServiceAccount, ClusterRole and binding as
// rendered, and answers the namespace.
func applyAgentRBAC(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ctx := t.Context()
	files, err := manifests.AddonsYAML(manifests.Options{Scenario: catalog.ScenarioAITraining, Nodes: 1, GPUsPerNode: 8},
		manifests.AddonOptions{GPUHealthAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	ns := manifests.DefaultNamespace
	mustCreate(t, "namespace", func() error {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	kinds := 0
	for _, doc := range strings.Split(files[manifests.AddonGPUHealthAgent], "---\n") {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		switch head.Kind {
		case "ServiceAccount":
			var sa corev1.ServiceAccount
			decode(t, doc, &sa)
			mustCreate(t, "service account", func() error {
				_, err := client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, &sa, metav1.CreateOptions{})
				return err
			})
		case "ClusterRole":
			var r rbacv1.ClusterRole
			decode(t, doc, &r)
			mustCreate(t, "cluster role", func() error {
				_, err := client.RbacV1().ClusterRoles().Create(ctx, &r, metav1.CreateOptions{})
				return err
			})
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			decode(t, doc, &b)
			mustCreate(t, "cluster role binding", func() error {
				_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &b, metav1.CreateOptions{})
				return err
			})
		default:
			continue
		}
		kinds++
	}
	if kinds != 3 {
		t.Fatalf("%s holds %d of the ServiceAccount, ClusterRole and binding", manifests.AddonGPUHealthAgent, kinds)
	}
	return ns
}

func decode(t *testing.T, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatal(err)
	}
}

func serviceAccountUser(ns string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", ns, manifests.GPUHealthAgentName)
}

// allowed asks the API server's RBAC authorizer whether the agent's ServiceAccount may make call a.
func allowed(t *testing.T, client kubernetes.Interface, ns string, a authzv1.ResourceAttributes) bool {
	t.Helper()
	review, err := client.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		ResourceAttributes: &a, User: serviceAccountUser(ns),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return review.Status.Allowed
}
