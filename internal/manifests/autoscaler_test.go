package manifests

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

func autoscalerOpts() ClusterAutoscalerOptions {
	return ClusterAutoscalerOptions{NodeGroups: []NodeGroup{
		{Name: "h100-spot", ScalingGroupID: "asg-00000000000000000002", Min: 0, Max: 50},
		{Name: "h100", ScalingGroupID: "asg-00000000000000000001", Min: 2, Max: 1000},
		{Name: "a10", ScalingGroupID: "asg-0000000000000000000a", Min: 0, Max: 8},
	}}
}

func renderAutoscaler(t *testing.T, c ClusterAutoscalerOptions) (map[string]any, string) {
	t.Helper()
	docs, err := RenderClusterAutoscaler(c)
	if err != nil {
		t.Fatal(err)
	}
	y := Join(docs)
	return decodeAll(t, y), y
}

func autoscalerContainer(t *testing.T, objs map[string]any) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	d, ok := objs["Deployment/"+ClusterAutoscalerName].(*appsv1.Deployment)
	if !ok {
		t.Fatalf("no Deployment %s among %v", ClusterAutoscalerName, slices.Sorted(maps.Keys(objs)))
	}
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%d containers", n)
	}
	return d, d.Spec.Template.Spec.Containers[0]
}

// TestClusterAutoscalerNamesEveryGroup: one --nodes=min:max:id per pool, with the pool's bounds,
// whatever order the pools come in, and the alicloud provider.
func TestClusterAutoscalerNamesEveryGroup(t *testing.T) {
	c := autoscalerOpts()
	objs, _ := renderAutoscaler(t, c)
	_, ctr := autoscalerContainer(t, objs)
	var nodes []string
	for _, a := range ctr.Command {
		if v, ok := strings.CutPrefix(a, "--nodes="); ok {
			nodes = append(nodes, v)
		}
	}
	want := []string{"2:1000:asg-00000000000000000001", "0:50:asg-00000000000000000002", "0:8:asg-0000000000000000000a"}
	if !slices.Equal(nodes, want) {
		t.Errorf("--nodes flags %v, want %v", nodes, want)
	}
	for _, g := range c.NodeGroups {
		if !slices.Contains(nodes, fmt.Sprintf("%d:%d:%s", g.Min, g.Max, g.ScalingGroupID)) {
			t.Errorf("pool %s (%s) is not a node group of the autoscaler", g.Name, g.ScalingGroupID)
		}
	}
	if !slices.Contains(ctr.Command, "--cloud-provider=alicloud") || ctr.Command[0] != "/cluster-autoscaler" {
		t.Errorf("command %v: want /cluster-autoscaler --cloud-provider=alicloud", ctr.Command)
	}
	if ctr.Image != images.Ref(images.ClusterAutoscaler) {
		t.Errorf("image %q, want the pinned %q", ctr.Image, images.Ref(images.ClusterAutoscaler))
	}
	reversed := autoscalerOpts()
	slices.Reverse(reversed.NodeGroups)
	_, y1 := renderAutoscaler(t, c)
	_, y2 := renderAutoscaler(t, reversed)
	if y1 != y2 {
		t.Error("the rendering depends on the order the pools are listed in")
	}
}

// TestClusterAutoscalerScaleDownAndPlacement: idle GPU nodes are removed (flags), the pod runs on
// the control plane, tolerating its taint, with the RBAC the autoscaler needs.
func TestClusterAutoscalerScaleDownAndPlacement(t *testing.T) {
	c := autoscalerOpts()
	c.ScaleDownUnneededTime = 30 * time.Minute
	c.ScaleDownUtilization = 0.25
	objs, _ := renderAutoscaler(t, c)
	d, ctr := autoscalerContainer(t, objs)
	for _, flag := range []string{"--scale-down-enabled=true", "--scale-down-unneeded-time=30m", "--scale-down-utilization-threshold=0.25",
		"--skip-nodes-with-local-storage=false", "--ignore-daemonsets-utilization=true", "--max-node-provision-time=25m"} {
		if !slices.Contains(ctr.Command, flag) {
			t.Errorf("no %s in %v", flag, ctr.Command)
		}
	}
	spec := d.Spec.Template.Spec
	if _, ok := spec.NodeSelector[controlPlaneLabel]; !ok || len(spec.NodeSelector) != 1 {
		t.Errorf("node selector %v: want the control plane", spec.NodeSelector)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(tl corev1.Toleration) bool {
		return tl.Key == controlPlaneLabel && tl.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("tolerations %v do not tolerate the control-plane taint", spec.Tolerations)
	}
	if spec.ServiceAccountName != ClusterAutoscalerName || d.Namespace != ClusterAutoscalerNamespace {
		t.Errorf("service account %q namespace %q", spec.ServiceAccountName, d.Namespace)
	}
	cr, ok := objs["ClusterRole/"+ClusterAutoscalerName].(*rbacv1.ClusterRole)
	if !ok {
		t.Fatal("no ClusterRole")
	}
	can := func(group, res, verb string) bool {
		return slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, res) && slices.Contains(r.Verbs, verb) && len(r.ResourceNames) == 0
		})
	}
	for _, need := range [][3]string{{"", "pods/eviction", "create"}, {"", "nodes", "update"}, {"", "pods", "watch"},
		{"policy", "poddisruptionbudgets", "list"}, {"coordination.k8s.io", "leases", "create"}, {"apps", "daemonsets", "list"}} {
		if !can(need[0], need[1], need[2]) {
			t.Errorf("the ClusterRole cannot %s %q/%s", need[2], need[0], need[1])
		}
	}
	for _, kind := range []string{"ServiceAccount", "Role", "RoleBinding", "ClusterRoleBinding"} {
		if _, ok := objs[kind+"/"+ClusterAutoscalerName]; !ok {
			t.Errorf("no %s %s", kind, ClusterAutoscalerName)
		}
	}
}

// secretLooking matches what a credential in a manifest looks like: Alibaba Cloud AccessKey ids
// (LTAI...), the autoscaler's AccessKey and RRSA variables, a Secret object, a secret reference.
var secretLooking = regexp.MustCompile(`LTAI[0-9A-Za-z]{8,}|ACCESS_KEY_ID|ACCESS_KEY_SECRET|ALIBABA_CLOUD_ROLE_ARN|ALICLOUD_ROLE_ARN|OIDC|(?m)^kind: Secret$|secretKeyRef|secretName|(?i)password|(?i)token`)

// TestClusterAutoscalerCarriesNoSecret: no AccessKey, no Secret, no secret reference: the
// autoscaler authenticates with the control-plane node's RAM role through the metadata server.
func TestClusterAutoscalerCarriesNoSecret(t *testing.T) {
	objs, y := renderAutoscaler(t, autoscalerOpts())
	if m := secretLooking.FindAllString(y, -1); len(m) > 0 {
		t.Errorf("the Cluster Autoscaler manifests hold secret-looking values %v", m)
	}
	_, ctr := autoscalerContainer(t, objs)
	if len(ctr.Env) > 0 || len(ctr.EnvFrom) > 0 {
		t.Errorf("environment %v %v: any AccessKey or RRSA variable would take precedence over the instance RAM role", ctr.Env, ctr.EnvFrom)
	}
	// The pattern must find a key when there is one.
	if !secretLooking.MatchString("- name: ACCESS_KEY_ID\n  value: LTAI5tAbCdEfGhIjKlMn\n") {
		t.Fatal("secretLooking misses an AccessKey")
	}
}

func TestClusterAutoscalerBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*ClusterAutoscalerOptions)
		field string
	}{
		{"no groups", func(c *ClusterAutoscalerOptions) { c.NodeGroups = nil }, "cluster_autoscaler.node_groups"},
		{"bad id", func(c *ClusterAutoscalerOptions) { c.NodeGroups[1].ScalingGroupID = "sg-123" }, "cluster_autoscaler.node_groups[1].scaling_group_id"},
		{"twice", func(c *ClusterAutoscalerOptions) { c.NodeGroups[2].ScalingGroupID = c.NodeGroups[0].ScalingGroupID }, "cluster_autoscaler.node_groups[2].scaling_group_id"},
		{"min over max", func(c *ClusterAutoscalerOptions) { c.NodeGroups[0].Min = 60 }, "cluster_autoscaler.node_groups[0]"},
		{"image", func(c *ClusterAutoscalerOptions) { c.Image = "not an image" }, "cluster_autoscaler.image"},
		{"unneeded time", func(c *ClusterAutoscalerOptions) { c.ScaleDownUnneededTime = time.Second }, "cluster_autoscaler.scale_down_unneeded_time"},
		{"threshold", func(c *ClusterAutoscalerOptions) { c.ScaleDownUtilization = 1.5 }, "cluster_autoscaler.scale_down_utilization_threshold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := autoscalerOpts()
			tc.edit(&c)
			_, err := RenderClusterAutoscaler(c)
			var ie *planerr.Error
			if !errors.As(err, &ie) || ie.Path != tc.field || ie.Fix == "" {
				t.Fatalf("error %v, want a *planerr.Error on %s with a fix", err, tc.field)
			}
		})
	}
}

// TestAddonsIncludeClusterAutoscaler: the add-on set has the autoscaler exactly when the cluster
// has autoscaling pools, and it decodes strictly like the other files.
func TestAddonsIncludeClusterAutoscaler(t *testing.T) {
	c := autoscalerOpts()
	with, err := AddonsYAML(opts(catalog.ScenarioAITraining), AddonOptions{ClusterAutoscaler: &c})
	if err != nil {
		t.Fatal(err)
	}
	y, ok := with[AddonClusterAutoscaler]
	if !ok {
		t.Fatalf("no %s among %d files", AddonClusterAutoscaler, len(with))
	}
	objs := decodeAll(t, y)
	_, ctr := autoscalerContainer(t, objs)
	if !slices.Contains(ctr.Command, "--nodes=0:50:asg-00000000000000000002") {
		t.Errorf("add-on command %v", ctr.Command)
	}
	without, err := AddonsYAML(opts(catalog.ScenarioAITraining), AddonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := without[AddonClusterAutoscaler]; ok {
		t.Error("the autoscaler is in the add-ons of a cluster without autoscaling pools")
	}
	bad := ClusterAutoscalerOptions{}
	if _, err := AddonsYAML(opts(catalog.ScenarioAITraining), AddonOptions{ClusterAutoscaler: &bad}); err == nil {
		t.Error("add-ons with an autoscaler of no node group rendered")
	}
}
