package nodepool

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// A control-plane pool's nodes are its endpoint load balancer's backend servers: the pool keeps
// them equal to its running nodes on every create, update, roll and delete.

// SyncBackends makes the pool's running nodes among nodes the load balancer's backend servers
// for this pool: they are added, the pool's other instances (about to be deleted, not running)
// and servers that no longer exist are removed, and the nodes of another pool behind the same
// load balancer (the joining control-plane pool next to the first one) are kept. No call without
// a load balancer.
func SyncBackends(ctx context.Context, c *cloud.Client, lbID, poolID string, nodes []cloud.Instance) error {
	if lbID == "" {
		return nil
	}
	want := make([]cloud.BackendServer, 0, len(nodes))
	mine := map[string]bool{}
	for _, n := range nodes {
		mine[n.ID] = true
		if n.Status == "Running" {
			want = append(want, cloud.BackendServer{ServerID: n.ID})
		}
	}
	// From one read of the load balancer: add the pool's running nodes it lacks, remove what it
	// has that is neither one of them nor another pool's existing node (a node of this pool that
	// went, an instance deleted), and leave the rest. Never a whole-list write: another pool
	// sharing the load balancer (a control plane's first and joining pools) syncs at the same
	// time, and a list computed before its change would undo it.
	set := func() error {
		lb, err := c.FindLoadBalancer(ctx, lbID)
		if err != nil {
			return err
		}
		others, _, err := otherPoolsNodesOf(ctx, c, lb, poolID, mine)
		if err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, n := range others {
			keep[n.ID] = true
		}
		for _, w := range want {
			keep[w.ServerID] = true
		}
		var add, remove []cloud.BackendServer
		for _, w := range want {
			if !slices.ContainsFunc(lb.Backends, func(b cloud.BackendServer) bool { return b.ServerID == w.ServerID }) {
				add = append(add, cloud.BackendServer{ServerID: w.ServerID, Weight: 100})
			}
		}
		for _, b := range lb.Backends {
			if !keep[b.ServerID] {
				remove = append(remove, b)
			}
		}
		return c.ChangeBackendServers(ctx, lbID, add, remove)
	}
	err := set()
	if err != nil && ctx.Err() == nil {
		// Once more from a fresh read: an answer lost after the service acted (an add that did
		// happen) makes the first attempt's next step fail, and the second sees it done.
		err = set()
	}
	if err != nil {
		return fmt.Errorf("keeping the backend servers of load balancer %s equal to the pool's nodes: %w", lbID, err)
	}
	return nil
}

// otherPoolsNodes are the instances behind the load balancer that are another pool's (or none's):
// existing, not among mine, not tagged with this pool, and each one's backend weight. One
// DescribeInstances call for the servers not among mine, none when there are none.
func otherPoolsNodes(ctx context.Context, c *cloud.Client, lbID, poolID string, mine map[string]bool) ([]cloud.Instance, map[string]int, error) {
	lb, err := c.FindLoadBalancer(ctx, lbID)
	if err != nil {
		return nil, nil, err
	}
	return otherPoolsNodesOf(ctx, c, lb, poolID, mine)
}

// otherPoolsNodesOf is otherPoolsNodes from a load balancer already read.
func otherPoolsNodesOf(ctx context.Context, c *cloud.Client, lb *cloud.LoadBalancer, poolID string, mine map[string]bool) ([]cloud.Instance, map[string]int, error) {
	weights := map[string]int{}
	var ids []string
	for _, b := range lb.Backends {
		if !mine[b.ServerID] {
			weights[b.ServerID] = b.Weight
			ids = append(ids, b.ServerID)
		}
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	existing, err := c.DescribeInstancesByID(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	return slices.DeleteFunc(existing, func(in cloud.Instance) bool { return in.Tags[tagging.Pool] == poolID }), weights, nil
}

// DetachBackends takes the pool's nodes ids out of the load balancer's backend servers, leaving
// any other; a load balancer that is gone has none to take out.
func DetachBackends(ctx context.Context, c *cloud.Client, lbID string, ids []string) error {
	if lbID == "" || len(ids) == 0 {
		return nil
	}
	err := c.DetachBackendServers(ctx, lbID, ids)
	if cloud.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("taking the pool's nodes out of load balancer %s: %w", lbID, err)
	}
	return nil
}

// BackendsMissing reports whether a node among ids (a control-plane pool's nodes in state) is
// missing from its load balancer's backend servers (taken out outside Terraform). Servers that
// are no node of this pool may be another pool's behind the same load balancer, so they are not
// drift. An error counts as nothing missing: the refresh already read the nodes, and the next
// plan looks again.
func BackendsMissing(ctx context.Context, c *cloud.Client, lbID string, ids []string) bool {
	if lbID == "" {
		return false
	}
	lb, err := c.FindLoadBalancer(ctx, lbID)
	if err != nil {
		return false
	}
	backends := map[string]bool{}
	for _, b := range lb.Backends {
		backends[b.ServerID] = true
	}
	for _, id := range ids {
		if !backends[id] {
			return true
		}
	}
	return false
}
