package nodepool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// A roll's next wave waits until the last wave's new nodes have joined the cluster (issue #34).
// Taking the next wave down as soon as the last one's instances run would, on the cloud, have
// both waves out of the cluster at once: a GPU node runs for minutes before it joins (the
// bootstrap's driver, runtime and kubeadm join: the node agent's boot-time table models them at
// 4-5 minutes), so update_strategy.max_unavailable would not bound what is unavailable, a
// workload on the pool could lose every replica, and a control-plane roll would remove the next
// etcd member before the last one's replacement had joined.
//
// The provider holds no credentials of the cluster. What it can read is each instance's serial
// console (ECS GetInstanceConsoleOutput, with the provider's own API credentials:
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-getinstanceconsoleoutput),
// where the provider's node bootstrap writes its phases and, last, "joined"
// (bootstrap.ConsolePrefix, bootstrap.ParseConsole). So only a pool that renders that bootstrap
// waits (Spec.JoinTimeout is 0 otherwise).

// JoinPoll is how often a waiting wave reads its nodes' consoles.
var JoinPoll = 5 * time.Second

// WaitJoined waits until the console of every instance in ids says its bootstrap joined, at most
// timeout (0: no wait). An error names each node that did not join, with what its console says.
func WaitJoined(ctx context.Context, c *cloud.Client, pool string, ids []string, timeout time.Duration) error {
	if timeout <= 0 || len(ids) == 0 {
		return nil
	}
	deadline := time.Now().Add(timeout)
	pending := slices.Clone(ids)
	seen := map[string]bootstrap.ConsoleOutcome{}
	for {
		var still []string
		for _, id := range pending {
			out, err := c.ConsoleOutput(ctx, id)
			if err != nil {
				// The client already retried what can be retried (throttling, 5xx, dropped
				// connections): what is left is a refusal, such as a RAM policy without the action.
				return fmt.Errorf("node pool %s: reading node %s's serial console to see it join the cluster: %w. "+
					"The provider's credentials need ecs:GetInstanceConsoleOutput, or set update_strategy.join_timeout = \"0s\" to roll without waiting", pool, id, err)
			}
			if o := bootstrap.ParseConsole(out); !o.Joined {
				seen[id] = o
				still = append(still, id)
			}
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			return notJoinedError(pool, pending, seen, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(JoinPoll, time.Until(deadline))):
		}
	}
}

// notJoinedError says which nodes did not join and where each one's bootstrap stands.
func notJoinedError(pool string, ids []string, seen map[string]bootstrap.ConsoleOutcome, timeout time.Duration) error {
	var each []string
	for _, id := range ids {
		o := seen[id]
		switch {
		case !o.Seen:
			each = append(each, id+": no bootstrap line on its serial console (still booting, or the bootstrap never started)")
		case o.FailedPhase != "":
			each = append(each, fmt.Sprintf("%s: bootstrap phase %q failed (last phase done: %q)", id, o.FailedPhase, o.LastOK))
		default:
			each = append(each, fmt.Sprintf("%s: bootstrap at phase %q done, not joined", id, o.LastOK))
		}
	}
	return fmt.Errorf("node pool %s: the new nodes did not join the cluster within update_strategy.join_timeout (%s) of running: %s. "+
		"The roll stopped there, so no more nodes are out of the cluster than update_strategy.max_unavailable. "+
		"Read the nodes' serial consoles (ECS GetInstanceConsoleOutput) for why, fix it and apply again, or raise update_strategy.join_timeout",
		pool, timeout, strings.Join(each, "; "))
}
