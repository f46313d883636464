package provider

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// The tags the provider puts on what it creates, for every resource. Keys under "gpucluster:"
// are reserved: the tags attribute of every resource refuses them, and userTags drops them when
// reading back.
const (
	tagPrefix    = "gpucluster:"
	tagManagedBy = "gpucluster:managed-by"
	managedByVal = "terraform-provider-gpucluster"

	// gpucluster_rdma_network.
	tagNetwork   = "gpucluster:network"    // the network's name
	tagNetworkID = "gpucluster:network-id" // the network's id, on objects created after it exists
	tagOptions   = "gpucluster:options"    // settings with no other cloud-side record (security group only)

	// gpucluster_storage_tier: the tier's name on its file system or bucket. With
	// gpucluster:managed-by it lets a later apply find, and adopt, what an interrupted one created.
	tagStorageTier = "gpucluster:storage-tier"

	// gpucluster_node_pool, on every node. gpucluster:pool finds the pool's nodes on every read;
	// the name and network tags find the nodes of an apply that was killed before it saved the
	// pool's id.
	tagPool        = "gpucluster:pool"
	tagPoolName    = "gpucluster:pool-name"
	tagPoolNetwork = "gpucluster:pool-network"
	tagScenario    = "gpucluster:scenario"
	tagSpec        = "gpucluster:spec"
)

// maxUserTags leaves room for the reserved tags within the API's 20 per resource
// (cloud.MaxTagsPerResource).
const maxUserTags = 16

// templateLabelKeys are the node labels every pool registers its nodes with. An autoscaling
// pool's scaling configuration carries them as tags (configurationTags), so they are reserved
// tag keys too: a tags attribute refuses them and reading back leaves them out.
var templateLabelKeys = []string{bootstrap.NodeRoleLabel, bootstrap.ScenarioLabel, bootstrap.PoolLabel,
	bootstrap.GPUPresentLabel, bootstrap.GPUProductLabel}

// isReservedTagKey reports whether a tag key is the provider's own.
func isReservedTagKey(k string) bool {
	return strings.HasPrefix(k, tagPrefix) || slices.Contains(templateLabelKeys, k)
}

// userTags drops the provider's reserved tags, leaving what a tags attribute holds.
func userTags(all map[string]string) map[string]string {
	out := make(map[string]string, len(all))
	for k, v := range all {
		if !isReservedTagKey(k) {
			out[k] = v
		}
	}
	return out
}

// mergeTags is the union of the maps; later maps win.
func mergeTags(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// checkUserTags is the plan-time check of every resource's tags attribute: no key of the
// provider's own, and at most limit tags (0: not counted here; the node pool counts its nodes'
// tags when it builds the RunInstances call).
func checkUserTags(v types.Map, limit int, diags *diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	elems := v.Elements()
	keys := make([]string, 0, len(elems))
	for k := range elems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, tagPrefix):
			diags.AddAttributeError(path.Root("tags").AtMapKey(k), "Reserved tag key",
				fmt.Sprintf("Tag keys starting with %q are the provider's own; rename %q. Use another prefix: the provider sets %s and its other tags itself.", tagPrefix, k, tagManagedBy))
		case isReservedTagKey(k):
			diags.AddAttributeError(path.Root("tags").AtMapKey(k), "Reserved tag key",
				fmt.Sprintf("%q is a node label the provider sets itself, and an autoscaling pool's nodes carry it as a tag so the Cluster Autoscaler can scale from zero; rename the tag. Node labels of your own go in kubernetes.labels.", k))
		}
	}
	if limit > 0 && len(elems) > limit {
		diags.AddAttributeError(path.Root("tags"), "Too many tags",
			fmt.Sprintf("%d tags given; at most %d, leaving room for the provider's own within the service's %d per resource.", len(elems), limit, cloud.MaxTagsPerResource))
	}
}
