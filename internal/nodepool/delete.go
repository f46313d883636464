package nodepool

import (
	"context"
	"errors"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// deleteStallRounds is how many polls without progress make a delete look for nodes it missed.
const deleteStallRounds = 10

// StopTimeout bounds the normal stop a node gets before it is deleted (issue #34): the kubelet's
// shutdownGracePeriod, during which its graceful node shutdown holds the machine up to terminate
// its pods, and a margin of 2 minutes for what comes before and after (the guest's ACPI
// shutdown reaching systemd, the rest of the shutdown once the kubelet lets go, ECS marking the
// instance Stopped). The margin is our estimate, not a vendor figure: neither the vendor nor
// upstream states a bound for those steps, and they take seconds on a healthy node.
const StopTimeout = bootstrap.ShutdownGracePeriod + 2*time.Minute

// RemoveNodes takes nodes out of the cluster and the cloud: a normal stop first, which has each
// node's kubelet terminate its pods gracefully (graceful node shutdown: the pods end Failed with
// the DisruptionTarget condition and their controllers replace them elsewhere), then the delete,
// and waits until they are gone. The provider holds no credentials of the cluster, so it neither
// cordons nor drains through the API: the kubelet's shutdown marks the node NotReady, which keeps
// new pods off it. A node that has not stopped within StopTimeout is deleted all the same, and a
// warning names it: nothing is left behind.
func RemoveNodes(ctx context.Context, c *cloud.Client, ids []string) (warnings []string, err error) {
	if warnings, err = stopFirst(ctx, c, ids); err != nil {
		return nil, err
	}
	if err := c.DeleteInstances(ctx, ids); err != nil {
		return warnings, err
	}
	return warnings, c.WaitInstancesGone(ctx, ids)
}

// stopFirst stops the nodes normally, at most StopTimeout, and warns of those that did not stop.
func stopFirst(ctx context.Context, c *cloud.Client, ids []string) (warnings []string, err error) {
	late, err := c.StopInstancesGracefully(ctx, ids, StopTimeout)
	if err != nil || len(late) == 0 {
		return nil, err
	}
	return []string{cloud.LateStopWarning(late, StopTimeout)}, nil
}

// DeleteNodes deletes every node carrying the pool's tag and waits until none is left. The nodes
// the state lists (known, just refreshed in a destroy) are used when the cloud counts as many
// tagged nodes, which spares listing a 10,000-node pool again (100 calls); otherwise, or when the
// count stops falling while waiting (a node the state did not know), the pool is listed by its
// tag. A control plane's nodes leave its load balancer (lbID, "" for none) before they are
// deleted; every node is stopped normally first, as RemoveNodes does (the warnings name those
// that did not stop in time).
func DeleteNodes(ctx context.Context, c *cloud.Client, poolID, lbID string, known []string) (warnings []string, err error) {
	tags := map[string]string{tagging.Pool: poolID}
	ids := known
	count, err := c.CountInstancesByTags(ctx, tags)
	if err != nil {
		return nil, err
	}
	if count != len(ids) {
		nodes, err := c.ListInstancesByTags(ctx, tags)
		if err != nil {
			return nil, err
		}
		ids = InstanceIDs(nodes)
	}
	for {
		if err := DetachBackends(ctx, c, lbID, ids); err != nil {
			return warnings, err
		}
		late, err := stopFirst(ctx, c, ids)
		warnings = append(warnings, late...)
		if err != nil {
			return warnings, err
		}
		if err := c.DeleteInstances(ctx, ids); err != nil {
			return warnings, err
		}
		err = c.WaitTaggedInstancesGone(ctx, tags, deleteStallRounds)
		if !errors.Is(err, cloud.ErrInstancesStalled) {
			return warnings, err
		}
		nodes, err := c.ListInstancesByTags(ctx, tags)
		if err != nil {
			return warnings, err
		}
		ids = InstanceIDs(nodes)
	}
}
