package nodeagent

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// Annotations on the nodes the agent registers.
const (
	// KwokNodeAnnotation hands the node to kwok, which keeps its heartbeat and runs its pods.
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	// InstanceAnnotation names the emulator instance behind the node.
	InstanceAnnotation = "emulator.gpucluster.io/instance-id"
	// GPUResource is the NVIDIA device plugin's extended resource.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
	// NetworkNotReadyOwner is the KwokNodeAnnotation value of a node registered without a pod
	// network: not kwok's "fake", so kwok does not make it Ready.
	NetworkNotReadyOwner = "network-not-ready"
	// maxPods is kubelet's default maxPods.
	maxPods = 110
)

// nodeFor is the Node the instance's kubelet registers: the labels and taints of its kubeadm
// nodeRegistration, with the labels kubelet itself always sets (hostname, os, arch) and, on a
// control-plane node, the ones kubeadm's mark-control-plane phase adds; capacity from the
// instance type (GPUs as nvidia.com/gpu, which the device plugin advertises on the real node).
//
// A node whose pod network cannot come up (notReady says why) is not handed to kwok: it
// registers with the Ready condition its kubelet posts, False, KubeletNotReady. kwok renews the
// Lease only of the nodes it manages, so the node lifecycle controller turns that condition
// Unknown after its grace period; NotReady either way, and GET /_emulator/nodes keeps the reason.
// conditions are added to the node's status (a CUDA that cannot initialise).
func nodeFor(in *emulator.InstanceView, p NodePlan, controlPlane bool, notReady string, conditions []corev1.NodeCondition) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": p.NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
	}
	if controlPlane {
		labels["node-role.kubernetes.io/control-plane"] = ""
		labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
	}
	maps.Copy(labels, p.Labels)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(in.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(in.MemoryGiB*1024)*1024*1024, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
	if in.GPUs > 0 {
		capacity[GPUResource] = *resource.NewQuantity(int64(in.GPUs), resource.DecimalSI)
	}
	owner := "fake"
	conds := append([]corev1.NodeCondition(nil), conditions...)
	if notReady != "" {
		owner = NetworkNotReadyOwner
		conds = append(conds, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: cniNotReady})
	}
	now := metav1.Now()
	for i := range conds {
		conds[i].LastHeartbeatTime, conds[i].LastTransitionTime = now, now
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        p.NodeName,
			Labels:      labels,
			Annotations: map[string]string{KwokNodeAnnotation: owner, InstanceAnnotation: in.ID},
		},
		Spec: corev1.NodeSpec{Taints: append([]corev1.Taint(nil), p.Taints...), ProviderID: providerIDOf(in, p)},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: in.PrivateIP},
				{Type: corev1.NodeHostName, Address: p.NodeName},
			},
			NodeInfo:   corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux", KubeletVersion: kubeletVersionField(p)},
			Conditions: conds,
		},
	}
}

// providerIDOf is the spec.providerID the node's kubelet registers with: the bootstrap of an
// autoscaling pool's node passes --provider-id=<region-id>.<instance-id>, both read from the
// instance metadata (internal/bootstrap nodephases.go), and the kubelet sets it on its Node
// (https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/, --provider-id).
// The Cluster Autoscaler's alicloud provider finds a node's scaling group by it; a node without
// one is "unregistered" to the autoscaler. "" when the bootstrap passes none, as the kubelet does.
func providerIDOf(in *emulator.InstanceView, p NodePlan) string {
	if !p.ProviderID {
		return ""
	}
	return in.Region + "." + in.ID
}

// kubeletVersionField is the version the kubelet reports in status.nodeInfo ("v1.33.6", what
// kubectl get nodes shows), from the release its bootstrap installs; "" when it pins none.
func kubeletVersionField(p NodePlan) string {
	if p.KubeletVersion == "" {
		return ""
	}
	return "v" + p.KubeletVersion
}
