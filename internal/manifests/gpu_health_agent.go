package manifests

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// The GPU health agent as an add-on (AddonGPUHealthAgent): a DaemonSet on the GPU nodes running
// cmd/gpucluster-gpu-health-agent, with the one ClusterRole it needs. It comes only with bundled
// add-ons (AddonOptions.GPUHealthAgent), as the MPI Operator does: the inline add-ons are at
// their user-data budget.
//
// The pod runs on the host network: the bootstrap's metadata guard drops pod traffic to the
// instance metadata service, which the agent reads for its instance's id, region and RAM role
// keys to ask for a replacement (the Cluster Autoscaler add-on is on the host network for the same
// reason). From there it reaches the node's dcgm-exporter at the exporter pod's IP.

// AddonGPUHealthAgent is the GPU health agent's add-on file, after dcgm-exporter's.
const AddonGPUHealthAgent = "25-gpu-health-agent.yaml"

// GPUHealthAgentName names the agent's ServiceAccount, ClusterRole, binding and DaemonSet.
const GPUHealthAgentName = "gpu-health-agent"

// GPUHealthAgentRules are exactly the calls the agent makes (internal/gpuhealthagent): read and
// update its Node (the taint and the replacement annotation), update the Node's status (the
// condition), list the pods (its node's, by field selector: GPU pods to evict and the
// dcgm-exporter pod to read) and evict pods through the Eviction API, which PodDisruptionBudgets
// hold. Nothing else: no delete, no patch, no cordon.
func GPUHealthAgentRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
	}
}

// gpuHealthAgent is the add-on's objects in apply order, in the GPU namespace with the
// device plugin and dcgm-exporter.
func gpuHealthAgent(o Options) []object {
	name, ns := GPUHealthAgentName, o.Namespace
	sa := &corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(name, ns, nil)}
	role := &rbacv1.ClusterRole{TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(name, "", nil),
		Rules: GPUHealthAgentRules()}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: meta(name, "", nil),
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
	}
	security := hardened()
	security.RunAsNonRoot, security.RunAsUser, security.ReadOnlyRootFilesystem = ptr(true), ptr(int64(65532)), ptr(true)
	ds := gpuDaemonSet(name, ns, corev1.PodSpec{
		ServiceAccountName: name,
		// Its own taint too: the agent must stay on the node it took out of service, to see the
		// GPU recover and take the taint off.
		Tolerations: []corev1.Toleration{{Key: health.UnhealthyTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		HostNetwork: true,
		DNSPolicy:   corev1.DNSClusterFirstWithHostNet,
		Containers: []corev1.Container{{
			Name: name, Image: images.RefIn(images.GPUHealthAgent, o.ImageRegistry),
			Args: []string{"-exporter-namespace=" + ns, fmt.Sprintf("-exporter-port=%d", dcgmPort)},
			Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			Resources:       footprint("10m", "32Mi", "128Mi"),
			SecurityContext: security,
		}},
	})
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}
	return []object{sa, role, binding, ds}
}
