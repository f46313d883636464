package manifestcheck

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"
)

// TestKueueAddonDecodesStrictly: every object of the Kueue add-on (65-kueue.yaml: the release
// internal/manifests embeds, then the rendered queues) decodes strictly into its Go type, Kueue's
// own for Kueue's kinds; every Kueue kind the queues use has its CRD in the same file, serving
// v1beta2; and the webhooks the release registers call the manager's Service in kueue-system.
func TestKueueAddonDecodesStrictly(t *testing.T) {
	served := map[string]bool{} // kind -> a CRD of kueue.x-k8s.io serves it at v1beta2
	used := map[string]bool{}
	webhookServices := map[string]bool{}
	count := 0
	for _, d := range mpirender(t, "addon") {
		var obj any
		switch d.Kind {
		case "CustomResourceDefinition":
			obj = &apiextv1.CustomResourceDefinition{}
		case "ResourceFlavor":
			obj = &kueue.ResourceFlavor{}
		case "ClusterQueue":
			obj = &kueue.ClusterQueue{}
		case "LocalQueue":
			obj = &kueue.LocalQueue{}
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "Namespace", "Service", "ServiceAccount", "ConfigMap", "Secret":
			obj = map[string]any{"Namespace": &corev1.Namespace{}, "Service": &corev1.Service{}, "ServiceAccount": &corev1.ServiceAccount{},
				"ConfigMap": &corev1.ConfigMap{}, "Secret": &corev1.Secret{}}[d.Kind]
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			obj = map[string]any{"ClusterRole": &rbacv1.ClusterRole{}, "ClusterRoleBinding": &rbacv1.ClusterRoleBinding{},
				"Role": &rbacv1.Role{}, "RoleBinding": &rbacv1.RoleBinding{}}[d.Kind]
		case "MutatingWebhookConfiguration":
			obj = &admissionv1.MutatingWebhookConfiguration{}
		case "ValidatingWebhookConfiguration":
			obj = &admissionv1.ValidatingWebhookConfiguration{}
		case "APIService":
			obj = &apiregv1.APIService{}
		default:
			t.Fatalf("no Go type for %s %s in the Kueue add-on", d.Kind, d.Name)
		}
		if err := yaml.UnmarshalStrict([]byte(d.YAML), obj); err != nil {
			t.Errorf("%s %s: %v", d.Kind, d.Name, err)
			continue
		}
		count++
		if strings.HasPrefix(d.APIVersion, "kueue.x-k8s.io/") {
			used[d.Kind] = true
		}
		switch o := obj.(type) {
		case *apiextv1.CustomResourceDefinition:
			for _, v := range o.Spec.Versions {
				if o.Spec.Group == "kueue.x-k8s.io" && v.Name == "v1beta2" && v.Served {
					served[o.Spec.Names.Kind] = true
				}
			}
		case *admissionv1.MutatingWebhookConfiguration:
			for _, w := range o.Webhooks {
				webhookServices[w.ClientConfig.Service.Namespace+"/"+w.ClientConfig.Service.Name] = true
			}
		case *admissionv1.ValidatingWebhookConfiguration:
			for _, w := range o.Webhooks {
				webhookServices[w.ClientConfig.Service.Namespace+"/"+w.ClientConfig.Service.Name] = true
			}
		}
	}
	if len(used) != 3 {
		t.Errorf("Kueue kinds in the add-on: %v, want ResourceFlavor, ClusterQueue and LocalQueue", used)
	}
	for kind := range used {
		if !served[kind] {
			t.Errorf("%s is in the add-on but no CRD in it serves kueue.x-k8s.io/v1beta2 %s", kind, kind)
		}
	}
	if len(webhookServices) != 1 || !webhookServices["kueue-system/kueue-webhook-service"] {
		t.Errorf("the release's webhooks call %v, want kueue-system/kueue-webhook-service only", webhookServices)
	}
	t.Logf("%d objects decoded strictly; Kueue CRDs serving v1beta2: %d", count, len(served))
}
