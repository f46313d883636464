package manifests

// The Kubernetes Cluster Autoscaler for Alibaba Cloud: its alicloud cloud provider sizes each
// autoscaling node pool's Auto Scaling (ESS) group between the pool's bounds.
//
// How it is run here, read from the autoscaler's source (github.com/kubernetes/autoscaler,
// cluster-autoscaler/cloudprovider/alicloud, at the release internal/images pins):
//   - Credentials (alicloud_cloud_config.go, isValid): an AccessKey from ACCESS_KEY_ID /
//     ACCESS_KEY_SECRET, else RRSA (an OIDC token file and role ARN), else the STS token of the
//     ECS instance's RAM role from the metadata server (metadata.go, Ram/security-credentials).
//     This Deployment sets none of the variables of the first two, so the autoscaler takes the
//     third: the RAM role of the control-plane node it runs on. No key is in any manifest. The
//     nodes keep pods off the metadata server, so the autoscaler runs with hostNetwork.
//   - Node groups are `--nodes=<min>:<max>:<scaling group id>`, one flag per group; the provider
//     has no auto-discovery.
//   - Nodes are matched to groups by spec.providerID `<region>.<instance id>`, which the node
//     bootstrap gives every kubelet (internal/bootstrap).
//   - Scale from zero: TemplateNodeInfo builds a node from the group's active scaling
//     configuration (instance type vCPU, memory and GPU count; the configuration's tags become
//     labels), so a group at 0 nodes can still be chosen for a pending pod. The template carries
//     no taints.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Cluster Autoscaler names and defaults.
const (
	// ClusterAutoscalerName names its ServiceAccount, RBAC objects and Deployment; it is also the
	// autoscaler's own default name of its leader-election lease.
	ClusterAutoscalerName = "cluster-autoscaler"
	// ClusterAutoscalerNamespace is kube-system, where the autoscaler keeps its status ConfigMap
	// and leader-election lease by default.
	ClusterAutoscalerNamespace = "kube-system"
	// AddonClusterAutoscaler is its add-on file: after the monitoring stack, before the reaper.
	AddonClusterAutoscaler = "35-cluster-autoscaler.yaml"
	// DefaultScaleDownUnneededTime is how long a GPU node must be idle before it is removed.
	DefaultScaleDownUnneededTime = 10 * time.Minute
	// DefaultScaleDownUtilization: a node whose requested GPUs (on GPU nodes the autoscaler
	// counts GPUs only) are below this share is a scale-down candidate.
	DefaultScaleDownUtilization = 0.5
	// MaxNodeProvisionTime is how long the autoscaler waits for a launched node to register
	// before it gives up on it and tries another group. The emulator's node agent models a GPU
	// worker's registration at about a minute from a baked node image and 5 to 6 minutes from the
	// public image (BENCHMARKS.md, "Modeled time to Ready"), both inside the upstream default of
	// 15 minutes; the model's instance boot is an estimate (the vendor publishes none) and bare
	// metal boots slower, and a node given up on is deleted while it may still be joining, so
	// the margin is kept: 25 minutes.
	MaxNodeProvisionTime  = 25 * time.Minute
	clusterAutoscalerPort = 8085
	controlPlaneLabel     = "node-role.kubernetes.io/control-plane"
)

// NodeGroup is one autoscaling node pool as the Cluster Autoscaler sees it.
type NodeGroup struct {
	// Name is the pool's name, for messages.
	Name string
	// ScalingGroupID is the pool's Auto Scaling group (gpucluster_node_pool.scaling_group_id).
	ScalingGroupID string
	// Min and Max are the pool's autoscaling bounds.
	Min, Max int
}

// ClusterAutoscalerOptions configure the Cluster Autoscaler of a cluster.
type ClusterAutoscalerOptions struct {
	// NodeGroups are every autoscaling pool of the cluster; at least one.
	NodeGroups []NodeGroup
	// Image is the autoscaler image; default internal/images ClusterAutoscaler in ImageRegistry.
	Image string
	// ImageRegistry is the cluster's image registry (Options.ImageRegistry); Addons passes its own.
	ImageRegistry string
	// ScaleDownUnneededTime is how long a node stays unneeded before it is removed; default
	// DefaultScaleDownUnneededTime, at least one minute.
	ScaleDownUnneededTime time.Duration
	// ScaleDownUtilization is the requested share under which a node is unneeded; default
	// DefaultScaleDownUtilization, between 0 and 1.
	ScaleDownUtilization float64
}

var scalingGroupIDRE = regexp.MustCompile(`^asg-[a-z0-9]+$`)

// withDefaults validates the options and fills the defaults; node groups come back sorted by
// scaling group id, so the rendered flags do not move when pools are listed in another order.
func (c ClusterAutoscalerOptions) withDefaults() (ClusterAutoscalerOptions, error) {
	if len(c.NodeGroups) == 0 {
		return c, planerr.Input("cluster_autoscaler.node_groups", "[]", "is empty", "list every autoscaling pool: { name, scaling_group_id, min_size, max_size } from each gpucluster_node_pool with autoscaling")
	}
	groups := slices.Clone(c.NodeGroups)
	seen := map[string]bool{}
	for i, g := range groups {
		field := planerr.Index("cluster_autoscaler.node_groups", i)
		if !scalingGroupIDRE.MatchString(g.ScalingGroupID) {
			return c, planerr.Input(planerr.Join(field, "scaling_group_id"), g.ScalingGroupID, "is not an Auto Scaling group id (asg-...)", "pass the pool's scaling_group_id attribute")
		}
		if seen[g.ScalingGroupID] {
			return c, planerr.Input(planerr.Join(field, "scaling_group_id"), g.ScalingGroupID, "is listed twice", "list each autoscaling pool once")
		}
		seen[g.ScalingGroupID] = true
		if g.Min < 0 || g.Max < 1 || g.Min > g.Max {
			return c, planerr.Input(field, fmt.Sprintf("%d..%d", g.Min, g.Max), "is not a node range with 0 <= min_size <= max_size and max_size >= 1", "pass the pool's autoscaling.min_size and max_size")
		}
	}
	slices.SortFunc(groups, func(a, b NodeGroup) int { return strings.Compare(a.ScalingGroupID, b.ScalingGroupID) })
	c.NodeGroups = groups
	if err := images.CheckRegistry("image_registry", c.ImageRegistry); err != nil {
		return c, err
	}
	if c.Image == "" {
		c.Image = images.RefIn(images.ClusterAutoscaler, c.ImageRegistry)
	}
	if !imageRE.MatchString(c.Image) {
		return c, planerr.Input("cluster_autoscaler.image", c.Image, "is not an image reference", "use registry/repository:tag, such as "+images.Ref(images.ClusterAutoscaler))
	}
	if c.ScaleDownUnneededTime == 0 {
		c.ScaleDownUnneededTime = DefaultScaleDownUnneededTime
	}
	if c.ScaleDownUnneededTime < time.Minute {
		return c, planerr.Input("cluster_autoscaler.scale_down_unneeded_time", c.ScaleDownUnneededTime.String(), "is under one minute, which removes nodes between two jobs of a queue", "use a duration such as 10m (the default)")
	}
	if c.ScaleDownUtilization == 0 {
		c.ScaleDownUtilization = DefaultScaleDownUtilization
	}
	if c.ScaleDownUtilization <= 0 || c.ScaleDownUtilization > 1 {
		return c, planerr.Input("cluster_autoscaler.scale_down_utilization_threshold", fmt.Sprint(c.ScaleDownUtilization), "is not a share between 0 and 1", "use such as 0.5 (the default)")
	}
	return c, nil
}

// RenderClusterAutoscaler renders the Cluster Autoscaler: ServiceAccount, ClusterRole and Role
// with their bindings, and the Deployment on the control plane.
func RenderClusterAutoscaler(c ClusterAutoscalerOptions) ([]Document, error) {
	objs, err := clusterAutoscaler(c)
	if err != nil {
		return nil, err
	}
	return documents(objs)
}

// ClusterAutoscalerArgs are the autoscaler's command-line flags for the options (defaults filled).
func ClusterAutoscalerArgs(c ClusterAutoscalerOptions) []string {
	args := []string{
		"--cloud-provider=alicloud",
		"--v=2",
		// Several GPU pools of one scenario are alike: spread a scale-up over them rather than
		// filling one, and pick the group that wastes the fewest resources.
		"--expander=least-waste",
		"--balance-similar-node-groups=true",
		"--scale-down-enabled=true",
		"--scale-down-unneeded-time=" + durationFlag(c.ScaleDownUnneededTime),
		"--scale-down-delay-after-add=" + durationFlag(c.ScaleDownUnneededTime),
		fmt.Sprintf("--scale-down-utilization-threshold=%g", c.ScaleDownUtilization),
		// Training pods keep data in emptyDir (/dev/shm, checkpoints staged locally): without
		// this, no GPU node running one would ever be removed, idle or not.
		"--skip-nodes-with-local-storage=false",
		// The device plugin and dcgm-exporter DaemonSets run on every GPU node; their requests
		// must not keep an idle node above the threshold.
		"--ignore-daemonsets-utilization=true",
		"--max-node-provision-time=" + durationFlag(MaxNodeProvisionTime),
		"--namespace=" + ClusterAutoscalerNamespace,
		fmt.Sprintf("--address=:%d", clusterAutoscalerPort),
	}
	for _, g := range c.NodeGroups {
		args = append(args, fmt.Sprintf("--nodes=%d:%d:%s", g.Min, g.Max, g.ScalingGroupID))
	}
	return args
}

// durationFlag writes whole minutes as "10m" (Go's flag parser reads either form).
func durationFlag(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", int64(d/time.Minute))
	}
	return d.String()
}

func clusterAutoscaler(c ClusterAutoscalerOptions) ([]object, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	name, ns := ClusterAutoscalerName, ClusterAutoscalerNamespace
	sa := &corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(name, ns, nil)}
	read := []string{"watch", "list", "get"}
	// The rules of the autoscaler's own example manifests (cloudprovider/*/examples at the pinned
	// release): read what decides where pods fit, evict pods from nodes it removes, update nodes
	// (its taints on nodes being removed), its lease and its status ConfigMap.
	clusterRole := &rbacv1.ClusterRole{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(name, "", nil),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"events", "endpoints"}, Verbs: []string{"create", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"update"}},
			{APIGroups: []string{""}, Resources: []string{"endpoints"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"watch", "list", "get", "update"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces", "pods", "services", "replicationcontrollers", "persistentvolumeclaims", "persistentvolumes"}, Verbs: read},
			{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"watch", "list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets", "replicasets", "daemonsets"}, Verbs: read},
			{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"deviceclasses", "resourceslices", "resourceclaims"}, Verbs: read},
			{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses", "csinodes", "csidrivers", "csistoragecapacities", "volumeattachments"}, Verbs: read},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"watch", "list", "get", "patch"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"}},
		},
	}
	role := &rbacv1.Role{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(name, ns, nil),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cluster-autoscaler-status"}, Verbs: []string{"delete", "get", "update", "watch"}},
		},
	}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}
	clusterBinding := &rbacv1.ClusterRoleBinding{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: meta(name, "", nil),
		Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(name, ns, nil),
		Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
	}
	labels := map[string]string{"app.kubernetes.io/name": name}
	probe := &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health-check", Port: intstr.FromInt32(clusterAutoscalerPort)}},
		InitialDelaySeconds: 30, PeriodSeconds: 30, TimeoutSeconds: 5, FailureThreshold: 3,
	}
	deploy := &appsv1.Deployment{
		TypeMeta: tm("apps/v1", "Deployment"), ObjectMeta: meta(name, ns, nil),
		Spec: appsv1.DeploymentSpec{
			// One replica: the autoscaler is leader-elected, and a second one would only wait.
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			// Recreate: the old pod must let go of the lease before the new one scales anything.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: name,
					PriorityClassName:  "system-cluster-critical",
					// On the control plane: its nodes are never scaled, so the autoscaler is never
					// evicted by its own scale-down, and their RAM role is what it authenticates
					// with. On the host's network: the nodes drop pod traffic to the metadata
					// server (internal/bootstrap metadataguard.go), which only the host reaches.
					// Its DNS is then the host's (DNSDefault), which resolves the vendor's endpoints;
					// the API server it reaches at the kubernetes Service, which kube-proxy also
					// serves to the host.
					HostNetwork:  true,
					DNSPolicy:    corev1.DNSDefault,
					NodeSelector: map[string]string{controlPlaneLabel: ""},
					Tolerations:  []corev1.Toleration{{Key: controlPlaneLabel, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), // distroless "nonroot"
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name: name, Image: c.Image,
						Command: append([]string{"/cluster-autoscaler"}, ClusterAutoscalerArgs(c)...),
						Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: clusterAutoscalerPort}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("300Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("600Mi")},
						},
						LivenessProbe: probe,
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
				},
			},
		},
	}
	return []object{sa, clusterRole, role, clusterBinding, binding, deploy}, nil
}
