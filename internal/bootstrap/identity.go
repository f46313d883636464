package bootstrap

import (
	"maps"
	"slices"
	"strings"
)

// Labels every node of a pool carries, besides NodeRoleLabel.
const (
	ScenarioLabel   = "gpucluster.io/scenario"
	PoolLabel       = "gpucluster.io/pool"
	GPUPresentLabel = "nvidia.com/gpu.present"
	GPUProductLabel = "nvidia.com/gpu.product"
)

// NodeIdentity is everything a node's Kubernetes labels and taints depend on. Its Labels and
// Taints are the one place they are decided: the node pool reports them as node_labels and
// node_taints, the kubeadm NodeRegistration registers exactly them, and the modules output them,
// so what a user reads in the plan is what kubelet applies.
type NodeIdentity struct {
	// Role is RoleControlPlane or RoleGPUWorker.
	Role string
	// Scenario and Pool label the node when set (gpucluster.io/scenario, gpucluster.io/pool).
	Scenario, Pool string
	// GPU is true for a GPU worker on an instance type with GPUs: it gets the nvidia.com/gpu.*
	// labels and the GPU taint. A control plane never does.
	GPU bool
	// GPUProduct is the nvidia.com/gpu.product value ("" leaves the label out).
	GPUProduct string
	// UserLabels are added last: a key here overrides a default.
	UserLabels map[string]string
	// UserTaints come after the GPU taint; one with the GPU taint's key replaces it.
	UserTaints []Taint
}

// GPUTaint is the taint of every GPU node: key nvidia.com/gpu, no value, effect NoSchedule, the
// form the NVIDIA device plugin's documentation and GPU operators use. Pods that request
// nvidia.com/gpu get a matching toleration from the ExtendedResourceToleration admission plugin
// where it is on; the manifests tolerate it with operator Exists.
func GPUTaint() Taint { return Taint{Key: GPUTaintKey, Effect: GPUTaintEffect} }

// gpuNode reports whether the identity gets the GPU labels and taint.
func (n NodeIdentity) gpuNode() bool { return n.Role == RoleGPUWorker && n.GPU }

// Labels are the labels the node registers with.
func (n NodeIdentity) Labels() map[string]string {
	out := map[string]string{NodeRoleLabel: RoleLabelValue(n.Role)}
	if n.Scenario != "" {
		out[ScenarioLabel] = n.Scenario
	}
	if n.Pool != "" {
		out[PoolLabel] = n.Pool
	}
	if n.gpuNode() {
		out[GPUPresentLabel] = "true"
		if n.GPUProduct != "" {
			out[GPUProductLabel] = n.GPUProduct
		}
	}
	maps.Copy(out, n.UserLabels)
	return out
}

// Taints are the taints the node registers with (kubeadm's control-plane taint aside, which the
// kubeadm configuration keeps on every control-plane node).
func (n NodeIdentity) Taints() []Taint {
	out := []Taint{}
	if n.gpuNode() && !slices.ContainsFunc(n.UserTaints, func(t Taint) bool { return t.Key == GPUTaintKey }) {
		out = append(out, GPUTaint())
	}
	return append(out, n.UserTaints...)
}

// String is the taint as node pools write it: key=value:Effect, or key:Effect without a value
// (kubectl's notation).
func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// ParseTaint reads key=value:Effect or key:Effect. It does not validate; Validate does.
func ParseTaint(s string) Taint {
	kv, effect, _ := strings.Cut(s, ":")
	key, value, _ := strings.Cut(kv, "=")
	return Taint{Key: key, Value: value, Effect: effect}
}

// DefaultWorkerTaints is the taint every GPU worker gets unless the caller overrides its key.
func DefaultWorkerTaints() []Taint {
	return NodeIdentity{Role: RoleGPUWorker, GPU: true}.Taints()
}
