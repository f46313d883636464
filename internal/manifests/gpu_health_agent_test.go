package manifests

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

// TestAddonsGPUHealthAgent: the add-on decodes strictly; its DaemonSet runs on the GPU nodes only,
// on the host network (the metadata guard keeps pods off the metadata service), with its node's
// name from the downward API, its image in the add-ons' registry, tolerating the taint it sets,
// under a ServiceAccount bound to exactly the agent's rules; without the option there is no such
// file.
func TestAddonsGPUHealthAgent(t *testing.T) {
	o := opts(catalog.ScenarioAITraining)
	o.ImageRegistry = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"
	files, err := AddonsYAML(o, AddonOptions{GPUHealthAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, files[AddonGPUHealthAgent])
	ds, ok := objs["DaemonSet/"+GPUHealthAgentName].(*appsv1.DaemonSet)
	role, okRole := objs["ClusterRole/"+GPUHealthAgentName].(*rbacv1.ClusterRole)
	binding, okBinding := objs["ClusterRoleBinding/"+GPUHealthAgentName].(*rbacv1.ClusterRoleBinding)
	if !ok || !okRole || !okBinding || objs["ServiceAccount/"+GPUHealthAgentName] == nil {
		t.Fatalf("%s lacks the agent's DaemonSet, ServiceAccount, ClusterRole or binding: %v", AddonGPUHealthAgent, objs)
	}
	spec := ds.Spec.Template.Spec
	c := spec.Containers[0]
	if !spec.HostNetwork || spec.ServiceAccountName != GPUHealthAgentName {
		t.Errorf("hostNetwork %v, service account %q; want the host network and %s", spec.HostNetwork, spec.ServiceAccountName, GPUHealthAgentName)
	}
	if want := gpuNodeSelector(); !maps.Equal(spec.NodeSelector, want) {
		t.Errorf("node selector %v, want the GPU nodes' %v", spec.NodeSelector, want)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(tol corev1.Toleration) bool {
		return tol.Key == health.UnhealthyTaintKey && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("tolerations %v lack the agent's own taint %s", spec.Tolerations, health.UnhealthyTaintKey)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "NODE_NAME" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("env %+v, want NODE_NAME from spec.nodeName", c.Env)
	}
	if !strings.HasPrefix(c.Image, o.ImageRegistry+"/gpu-health-agent:") {
		t.Errorf("image %s is not the agent's in the add-ons' registry %s", c.Image, o.ImageRegistry)
	}
	if !slices.Contains(c.Args, "-exporter-namespace="+DefaultNamespace) {
		t.Errorf("args %v do not name dcgm-exporter's namespace %s", c.Args, DefaultNamespace)
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != GPUHealthAgentName || binding.Subjects[0].Namespace != DefaultNamespace {
		t.Errorf("binding %+v does not bind %s to the agent's ServiceAccount", binding, role.Name)
	}
	without, err := AddonsYAML(o, AddonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := without[AddonGPUHealthAgent]; ok {
		t.Errorf("%s is in the add-ons without GPUHealthAgent", AddonGPUHealthAgent)
	}
}
