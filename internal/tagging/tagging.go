// Package tagging holds the tags the provider puts on what it creates, for every resource and
// every workflow package: the reserved keys, and how a resource's own tags are told apart from
// the user's. Keys under "gpucluster:" are reserved: the tags attribute of every resource
// refuses them, and UserTags drops them when reading back.
package tagging

import (
	"maps"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

const (
	Prefix       = "gpucluster:"
	ManagedBy    = "gpucluster:managed-by"
	ManagedByVal = "terraform-provider-gpucluster"

	// gpucluster_rdma_network.
	Network   = "gpucluster:network"    // the network's name
	NetworkID = "gpucluster:network-id" // the network's id, on objects created after it exists
	Options   = "gpucluster:options"    // settings with no other cloud-side record (security group only)

	// gpucluster_storage_tier: the tier's name on its file system or bucket. With
	// gpucluster:managed-by it lets a later apply find, and adopt, what an interrupted one created.
	StorageTier = "gpucluster:storage-tier"

	// gpucluster_control_plane_endpoint: the endpoint's name on its load balancer. With
	// gpucluster:network-id and gpucluster:managed-by it finds, and adopts, a load balancer an
	// interrupted apply created.
	ControlPlaneEndpoint = "gpucluster:control-plane-endpoint"

	// gpucluster_node_pool, on every node. gpucluster:pool finds the pool's nodes on every read;
	// the name and network tags find the nodes of an apply that was killed before it saved the
	// pool's id.
	Pool        = "gpucluster:pool"
	PoolName    = "gpucluster:pool-name"
	PoolNetwork = "gpucluster:pool-network"
	Scenario    = "gpucluster:scenario"
	Spec        = "gpucluster:spec"
	// ReplaceRequested is set on a fixed pool's node by the GPU health agent on it (its value
	// says why: the XID and the GPU); the pool's next plan shows the node replaced and the apply
	// replaces it. The tag goes with the released instance.
	ReplaceRequested = "gpucluster:replace-requested"

	// gpucluster_node_image: the image's name and a digest of what it holds, on the image, its
	// copies and its builder instance. Together with gpucluster:managed-by they find, and adopt,
	// the builder or image of an apply that was killed before it saved the image's id.
	NodeImage        = "gpucluster:node-image"
	NodeImageContent = "gpucluster:node-image-content"
	// NodeImageRole is "builder" on the builder instance, "image" on the image, "copy" on a copy.
	NodeImageRole = "gpucluster:node-image-role"
)

// TemplateLabelKeys are the node labels every pool registers its nodes with. An autoscaling
// pool's scaling configuration carries them as tags (nodepool.ConfigurationTags), so they are
// reserved tag keys too: a tags attribute refuses them and reading back leaves them out.
var TemplateLabelKeys = []string{bootstrap.NodeRoleLabel, bootstrap.ScenarioLabel, bootstrap.PoolLabel,
	bootstrap.GPUPresentLabel, bootstrap.GPUProductLabel}

// IsReserved reports whether a tag key is the provider's own.
func IsReserved(k string) bool {
	return strings.HasPrefix(k, Prefix) || slices.Contains(TemplateLabelKeys, k)
}

// UserTags drops the provider's reserved tags, leaving what a tags attribute holds.
func UserTags(all map[string]string) map[string]string {
	out := make(map[string]string, len(all))
	for k, v := range all {
		if !IsReserved(k) {
			out[k] = v
		}
	}
	return out
}

// Merge is the union of the maps; later maps win.
func Merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TokenParts is what identifies one create call, for its ClientToken (cloud.CreateOrAdopt): the
// call's own parts, then every tag as key=value in key order, so a change of tags is a different
// request.
func TokenParts(tags map[string]string, parts ...string) []string {
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		parts = append(parts, k+"="+tags[k])
	}
	return parts
}
