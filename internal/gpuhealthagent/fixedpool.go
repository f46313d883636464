package gpuhealthagent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// TagReplacer asks for the replacement of a fixed pool's node. A fixed pool's nodes are
// gpucluster_node_pool's own, replaced only by an apply, and the provider holds no credentials of
// the cluster: the agent tags its own instance gpucluster:replace-requested=<reason>, the pool's
// next refresh reads the tag, its plan shows the node replaced and naming why, and the apply
// replaces it as it rolls an outdated node (stopped normally first, so the kubelet ends its pods).
// A controller in the cluster that deleted the instance itself would need the rights to delete
// the pool's instances, and the pool would find a node missing rather than a node replaced; a
// tag needs only ecs:TagResources on the node's own instance.
type TagReplacer struct {
	Client *cloud.Client
	// InstanceID is the node's instance (from the metadata service: a fixed pool's nodes
	// register without a provider id).
	InstanceID string
}

// maxTagValue: "The tag value can be up to 128 characters in length"
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-tagresources).
const maxTagValue = 128

// Replace tags the instance with the request.
func (r TagReplacer) Replace(ctx context.Context, node *corev1.Node, reason string) error {
	if len(reason) > maxTagValue {
		reason = reason[:maxTagValue]
	}
	if err := r.Client.TagResources(ctx, cloud.KindInstance, []string{r.InstanceID}, map[string]string{tagging.ReplaceRequested: reason}); err != nil {
		return fmt.Errorf("tagging instance %s of node %s for replacement: %w", r.InstanceID, node.Name, err)
	}
	return nil
}
