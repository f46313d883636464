// Package manifestcheck decodes the Kueue objects internal/manifests renders strictly into
// Kueue's own Go types (sigs.k8s.io/kueue). It is a module of its own so that Kueue's
// dependencies (controller-runtime, client-go) stay out of the provider's build; it gets the
// objects from the provider's module by running tools/mpirender there, so it needs none of the
// provider's dependencies either.
package manifestcheck

import (
	"os/exec"
	"strings"
	"testing"

	kueueconfig "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// kueueDoc is one rendered object: its apiVersion, kind, name and YAML.
type kueueDoc struct{ APIVersion, Kind, Name, YAML string }

func renderQueues(t *testing.T) []kueueDoc { return mpirender(t) }

// mpirender runs tools/mpirender with args in the provider's module and splits its output.
func mpirender(t *testing.T, args ...string) []kueueDoc {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "./tools/mpirender"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./tools/mpirender %v: %v", args, err)
	}
	var docs []kueueDoc
	for _, y := range strings.Split(string(out), "---\n") {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(y), &head); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, kueueDoc{head.APIVersion, head.Kind, head.Metadata.Name, y})
	}
	return docs
}

func TestKueueObjectsDecodeStrictly(t *testing.T) {
	seen := map[string]int{}
	for _, d := range renderQueues(t) {
		var obj any
		switch d.Kind {
		case "ResourceFlavor":
			obj = &kueue.ResourceFlavor{}
		case "ClusterQueue":
			obj = &kueue.ClusterQueue{}
		case "LocalQueue":
			obj = &kueue.LocalQueue{}
		case "Role", "RoleBinding":
			// The idle-workload reaper's access to each team namespace, rendered with the queues.
			var rbac any = &rbacv1.Role{}
			if d.Kind == "RoleBinding" {
				rbac = &rbacv1.RoleBinding{}
			}
			if err := yaml.UnmarshalStrict([]byte(d.YAML), rbac); err != nil {
				t.Errorf("%s %s: %v", d.Kind, d.Name, err)
			}
			seen[d.Kind]++
			continue
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict([]byte(d.YAML), &cm); err != nil {
				t.Fatal(err)
			}
			if d.Name == "gpu-idle-reaper-teams" { // the reaper's list of team namespaces
				if cm.Data["TEAM_NAMESPACES"] == "" {
					t.Errorf("the reaper's ConfigMap names no team namespace: %v", cm.Data)
				}
				seen["reaper ConfigMap"]++
				continue
			}
			var cfg kueueconfig.Configuration
			if err := yaml.UnmarshalStrict([]byte(cm.Data["controller_manager_config.yaml"]), &cfg); err != nil {
				t.Errorf("Kueue configuration: %v", err)
			}
			if cfg.WaitForPodsReady == nil || cfg.WaitForPodsReady.BlockAdmission == nil || !*cfg.WaitForPodsReady.BlockAdmission {
				t.Errorf("waitForPodsReady %+v", cfg.WaitForPodsReady)
			}
			seen[d.Kind]++
			continue
		case "Namespace":
			continue
		default:
			t.Fatalf("no Kueue type for %s", d.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(d.YAML), obj); err != nil {
			t.Errorf("%s %s: %v\n%s", d.Kind, d.Name, err, d.YAML)
		}
		if cq, ok := obj.(*kueue.ClusterQueue); ok && cq.Spec.CohortName == "" {
			t.Errorf("ClusterQueue %s has no cohort", cq.Name)
		}
		seen[d.Kind]++
	}
	for kind, n := range map[string]int{"ConfigMap": 1, "ResourceFlavor": 2, "ClusterQueue": 2, "LocalQueue": 2,
		"reaper ConfigMap": 1, "Role": 2, "RoleBinding": 2} {
		if seen[kind] != n {
			t.Errorf("%d %s, want %d", seen[kind], kind, n)
		}
	}
}
