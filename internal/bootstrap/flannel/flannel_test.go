package flannel

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestRenderDecodesStrictly reads every document back strictly into its k8s.io/api type: an
// unknown or misspelt field fails here, not on the cluster.
func TestRenderDecodesStrictly(t *testing.T) {
	stream, err := Render("10.244.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]func() any{
		"Namespace": func() any { return &corev1.Namespace{} }, "ServiceAccount": func() any { return &corev1.ServiceAccount{} },
		"ConfigMap": func() any { return &corev1.ConfigMap{} }, "ClusterRole": func() any { return &rbacv1.ClusterRole{} },
		"ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} }, "DaemonSet": func() any { return &appsv1.DaemonSet{} },
	}
	got := map[string]any{}
	for i, doc := range strings.Split(stream, "---\n") {
		var meta struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		mk, ok := kinds[meta.Kind]
		if !ok {
			t.Fatalf("document %d has unexpected kind %q", i, meta.Kind)
		}
		obj := mk()
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("document %d (%s): %v\n%s", i, meta.Kind, err, doc)
		}
		got[meta.Kind] = obj
	}
	if len(got) != len(kinds) {
		t.Fatalf("got kinds %v, want one of each of %v", got, kinds)
	}
	var nc NetConf
	if err := json.Unmarshal([]byte(got["ConfigMap"].(*corev1.ConfigMap).Data["net-conf.json"]), &nc); err != nil {
		t.Fatal(err)
	}
	if nc.Network != "10.244.0.0/16" || nc.Backend.Type != "vxlan" {
		t.Fatalf("net-conf.json = %+v, want the pod CIDR with the vxlan backend", nc)
	}
	ds := got["DaemonSet"].(*appsv1.DaemonSet).Spec.Template.Spec
	if !ds.HostNetwork || len(ds.Tolerations) != 1 || ds.Tolerations[0].Operator != corev1.TolerationOpExists || ds.Tolerations[0].Key != "" {
		t.Fatalf("flannel must run on the host network on every node whatever its taints: %+v", ds.Tolerations)
	}
	for _, c := range append(ds.InitContainers, ds.Containers...) {
		if c.Image != Image && c.Image != CNIPluginImage || strings.HasSuffix(c.Image, ":latest") {
			t.Errorf("container %s image %s is not the pinned release", c.Name, c.Image)
		}
	}
	if _, err := Render(""); err == nil {
		t.Fatal("Render accepted an empty pod CIDR")
	}
}
