package provider

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The tags the provider puts on what it creates live in internal/tagging, shared with the
// workflow packages; these short names keep the resources' code readable.
const (
	tagPrefix    = tagging.Prefix
	tagManagedBy = tagging.ManagedBy
	managedByVal = tagging.ManagedByVal

	tagNetwork     = tagging.Network
	tagNetworkID   = tagging.NetworkID
	tagOptions     = tagging.Options
	tagStorageTier = tagging.StorageTier

	tagPool        = tagging.Pool
	tagPoolName    = tagging.PoolName
	tagPoolNetwork = tagging.PoolNetwork
	tagScenario    = tagging.Scenario
	tagSpec        = tagging.Spec
)

// maxUserTags leaves room for the reserved tags within the API's 20 per resource
// (cloud.MaxTagsPerResource).
const maxUserTags = 16

var (
	isReservedTagKey = tagging.IsReserved
	userTags         = tagging.UserTags
)

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
