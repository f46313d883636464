package nodepool

import (
	"context"
	"errors"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// deleteStallRounds is how many polls without progress make a delete look for nodes it missed.
const deleteStallRounds = 10

// DeleteNodes deletes every node carrying the pool's tag and waits until none is left. The nodes
// the state lists (known, just refreshed in a destroy) are used when the cloud counts as many
// tagged nodes, which spares listing a 10,000-node pool again (100 calls); otherwise, or when the
// count stops falling while waiting (a node the state did not know), the pool is listed by its
// tag. A control plane's nodes leave its load balancer (lbID, "" for none) before they are
// deleted.
func DeleteNodes(ctx context.Context, c *cloud.Client, poolID, lbID string, known []string) error {
	tags := map[string]string{tagging.Pool: poolID}
	ids := known
	count, err := c.CountInstancesByTags(ctx, tags)
	if err != nil {
		return err
	}
	if count != len(ids) {
		nodes, err := c.ListInstancesByTags(ctx, tags)
		if err != nil {
			return err
		}
		ids = InstanceIDs(nodes)
	}
	for {
		if err := DetachBackends(ctx, c, lbID, ids); err != nil {
			return err
		}
		if err := c.DeleteInstances(ctx, ids); err != nil {
			return err
		}
		err := c.WaitTaggedInstancesGone(ctx, tags, deleteStallRounds)
		if !errors.Is(err, cloud.ErrInstancesStalled) {
			return err
		}
		nodes, err := c.ListInstancesByTags(ctx, tags)
		if err != nil {
			return err
		}
		ids = InstanceIDs(nodes)
	}
}
