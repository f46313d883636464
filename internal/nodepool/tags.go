package nodepool

import (
	"maps"
	"slices"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The tags of a pool's cloud objects, fixed or autoscaling, written once: a fixed pool's
// RunInstances calls and an autoscaling pool's group and configuration all read them here.

// GroupTags are the scaling group's tags: the pool's name and network find a group an
// interrupted create left behind.
func GroupTags(spec Spec) map[string]string {
	return tagging.Merge(spec.UserTags, map[string]string{tagging.Pool: spec.PoolID, tagging.PoolName: spec.Name,
		tagging.PoolNetwork: spec.Network.ID, tagging.Scenario: spec.Scenario, tagging.ManagedBy: tagging.ManagedByVal})
}

// NodeTags are the tags every node of a pool carries, fixed or autoscaling.
func NodeTags(spec Spec) map[string]string {
	return tagging.Merge(GroupTags(spec), map[string]string{tagging.Spec: spec.SpecHash})
}

// ConfigurationTags are the tags of an autoscaling pool's scaling configuration, which the group
// puts on every node it launches: the node tags and the pool's built-in node labels.
//
// The labels are there for scale from zero. For a group without nodes the Cluster Autoscaler's
// alicloud provider builds a template node from the group's active configuration and takes the
// configuration's tags as the template's labels (cluster-autoscaler/cloudprovider/alicloud,
// alicloud_manager.go, buildGenericLabels). With the built-in labels there, a pending pod that
// selects gpucluster.io/pool or nvidia.com/gpu.product, as the rendered training and MPI jobs do,
// can start a group at zero. Labels from kubernetes.labels are left out: their keys could clash
// with the user's tags, and tags are capped at 20 per resource.
func ConfigurationTags(spec Spec) map[string]string {
	return tagging.Merge(NodeTags(spec), TemplateLabelTags(spec))
}

// TemplateLabelTags are the pool's built-in node labels (tagging.TemplateLabelKeys) with their
// values.
func TemplateLabelTags(spec Spec) map[string]string {
	labels := map[string]string{}
	for _, k := range tagging.TemplateLabelKeys {
		if v, ok := spec.Labels[k]; ok {
			labels[k] = v
		}
	}
	return labels
}

// TagCount is how many tags every node of the pool would carry: own of the provider's (for an
// autoscaling pool labels of them the built-in node labels its configuration carries) plus the
// user's. The plan refuses a pool over cloud.MaxTagsPerResource. A fixed pool's own count keeps
// one tag free for tagging.ReplaceRequested, which the GPU health agent sets on a node whose GPU
// must be replaced (an autoscaled node is replaced through Auto Scaling instead): at the cap,
// its TagResources would be refused and the request lost.
func TagCount(spec Spec) (own, labels int) {
	own = len(NodeTags(spec)) - len(spec.UserTags)
	if spec.Autoscale != nil {
		labels = len(TemplateLabelTags(spec))
		own += labels
	} else {
		own++
	}
	return own, labels
}

// nodeTagList is NodeTags as RunInstances takes them, in key order.
func nodeTagList(spec Spec) []cloud.Tag {
	tags := NodeTags(spec)
	out := make([]cloud.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, cloud.Tag{Key: k, Value: tags[k]})
	}
	return out
}
