package nodepool

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// joiningNodes plays the nodes' bootstrap on their serial consoles: each instance not in old,
// once Running, reports a phase at once and "joined" after delay. At the moment it reports a
// node joined it records which of old were still running: a roll that took the next wave down
// before the last one's node joined has fewer.
type joiningNodes struct {
	mu            sync.Mutex
	oldAtJoin     map[string][]string // new instance -> the old instances still Running when it joined
	stop, stopped chan struct{}
}

func playJoins(ctx context.Context, t *testing.T, c *cloudtest.Cloud, poolID string, old []string, delay time.Duration) *joiningNodes {
	j := &joiningNodes{oldAtJoin: map[string][]string{}, stop: make(chan struct{}), stopped: make(chan struct{})}
	first := map[string]time.Time{}
	go func() {
		defer close(j.stopped)
		for {
			select {
			case <-j.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			nodes, err := c.Client.ListInstancesByTags(ctx, map[string]string{tagging.Pool: poolID})
			if err != nil {
				continue
			}
			var running []string
			for _, n := range nodes {
				if n.Status == "Running" && slices.Contains(old, n.ID) {
					running = append(running, n.ID)
				}
			}
			for _, n := range nodes {
				if slices.Contains(old, n.ID) || n.Status != "Running" {
					continue
				}
				j.mu.Lock()
				_, joined := j.oldAtJoin[n.ID]
				j.mu.Unlock()
				switch seen, ok := first[n.ID]; {
				case joined:
				case !ok:
					first[n.ID] = time.Now()
					c.Emulator.SetConsoleOutput(n.ID, bootstrap.ConsolePrefix+"phase driver ok\n")
				case time.Since(seen) >= delay:
					j.mu.Lock()
					j.oldAtJoin[n.ID] = running
					j.mu.Unlock()
					c.Emulator.SetConsoleOutput(n.ID, bootstrap.ConsolePrefix+"phase driver ok\n"+bootstrap.ConsolePrefix+bootstrap.StateJoined+"\n")
				}
			}
		}
	}()
	t.Cleanup(func() { close(j.stop); <-j.stopped })
	return j
}

// fastJoinPoll reads the consoles every 50 ms for the test.
func fastJoinPoll(t *testing.T) {
	was := JoinPoll
	JoinPoll = 50 * time.Millisecond
	t.Cleanup(func() { JoinPoll = was })
}

// grownPool is a fixed pool of two created, and its nodes' ids.
func grownPool(t *testing.T) (context.Context, *cloudtest.Cloud, Spec, []string) {
	ctx, c, spec := startPool(t, 3, 2)
	if _, err := Grow(ctx, c.Client, spec, "create", nil, spec.Size); err != nil {
		t.Fatalf("create: %v", err)
	}
	return ctx, c, spec, InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
}

// TestRollWaitsForEachWaveToJoin (issue #34): a pool of two nodes rolled one at a time takes the
// second old node down only once the first wave's new node has joined (its console says so):
// when that node joined, the other old node still ran. The last wave is not waited for.
func TestRollWaitsForEachWaveToJoin(t *testing.T) {
	fastJoinPoll(t)
	ctx, c, spec, old := grownPool(t)
	joins := playJoins(ctx, t, c, spec.PoolID, old, 500*time.Millisecond)

	spec.SpecHash, spec.JoinTimeout = "spec-v2", time.Minute
	if _, err := Reconcile(ctx, c.Client, spec); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	joins.mu.Lock()
	defer joins.mu.Unlock()
	var waitedFor int
	for id, running := range joins.oldAtJoin {
		if len(running) == 1 {
			waitedFor++ // the first wave's node: the second old node still ran when it joined
		} else if len(running) > 1 {
			t.Errorf("node %s joined while %v ran: both old nodes, yet one was replaced", id, running)
		}
	}
	if waitedFor != 1 {
		t.Errorf("old nodes running when each new node joined: %v; want the first wave's node to join while the second old node still ran", joins.oldAtJoin)
	}
}

// A wave whose node never joins stops the roll: the error names the node and what its console
// says, and the next wave's old node is still there.
func TestRollStopsWhenAWaveDoesNotJoin(t *testing.T) {
	fastJoinPoll(t)
	ctx, c, spec, old := grownPool(t)
	spec.SpecHash, spec.JoinTimeout = "spec-v2", 500*time.Millisecond
	_, err := Reconcile(ctx, c.Client, spec)
	if err == nil {
		t.Fatal("Reconcile succeeded with a wave whose node never joined")
	}
	for _, want := range []string{"did not join the cluster within update_strategy.join_timeout (500ms)", "no bootstrap line on its serial console", "GetInstanceConsoleOutput"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	left := InstanceIDs(poolNodes(ctx, t, c, spec.PoolID))
	if kept := slices.DeleteFunc(slices.Clone(old), func(id string) bool { return !slices.Contains(left, id) }); len(kept) != 1 {
		t.Errorf("old nodes left %v of %v: want the second wave's one kept", kept, old)
	}
}

// TestAutoscaledRollWaitsForItsNewNodesToJoin: an autoscaling pool's roll grows the group by a
// wave and removes the wave's outdated nodes only once the new ones have joined: each new node
// joined while every old node not yet replaced still ran (two, then one).
func TestAutoscaledRollWaitsForItsNewNodesToJoin(t *testing.T) {
	fastJoinPoll(t)
	ctx, c, spec := startPool(t, 3, 0)
	spec = autoscaled(spec, 2, 3)
	first, err := ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	old := InstanceIDs(first.Nodes)
	joins := playJoins(ctx, t, c, spec.PoolID, old, 500*time.Millisecond)
	spec.SpecHash, spec.JoinTimeout = "spec-v2", time.Minute
	if _, err := ApplyAutoscaling(ctx, c.Client, spec); err != nil {
		t.Fatalf("roll: %v", err)
	}
	joins.mu.Lock()
	defer joins.mu.Unlock()
	var counts []int
	for _, running := range joins.oldAtJoin {
		counts = append(counts, len(running))
	}
	slices.Sort(counts)
	if !slices.Equal(counts, []int{1, 2}) {
		t.Errorf("old nodes running as each new node joined: %v; want two new nodes, joined while 2 and then 1 old ones ran", joins.oldAtJoin)
	}
}
