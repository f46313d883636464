package nodepool

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/poolplan"
)

// Answers that mean "no machines of this type here right now": go on with the next zone or
// type. Anything else stops the apply.
var outOfStockCodes = []string{
	"OperationDenied.NoStock", "Zone.NotOnSale", "InvalidInstanceType.NotSupported",
	"InvalidResourceType.NotSupported", "OperationDenied.ZoneNotAllowed",
}

// batchWorkers is how many RunInstances calls a pool keeps in flight; the shared rate limiter
// still paces them.
const batchWorkers = 4

// Outcome is what a grow or reconcile left behind: every node the pool has now (including ones
// that failed to start), and the story of each zone and type tried.
type Outcome struct {
	IDs      []string
	Attempts []string
	Used     map[string]int // instance type -> nodes created with it
	// Running holds every node as the final wait saw it, when that wait covered all of IDs;
	// the provider then records them without describing the pool again.
	Running []cloud.Instance
	// Warnings are for the user: nodes deleted before they had stopped (RemoveNodes).
	Warnings []string
}

// Grow brings the pool from the nodes in existing to size, trying zones and (if allowed) types in
// order, then waits for every node to run. The outcome lists every node that exists even when it
// returns an error, so the caller records them all.
// operation names this grow uniquely (see poolplan.Generation).
func Grow(ctx context.Context, c *cloud.Client, spec Spec, operation string, existing []cloud.Instance, size int) (Outcome, error) {
	out := Outcome{IDs: InstanceIDs(existing), Used: map[string]int{}}
	remaining := size - len(existing)
	if remaining > 0 {
		gen := poolplan.Generation(operation, out.IDs)
		for round, try := range poolplan.Tries(spec.Zones, spec.Types, spec.Fallback) {
			if remaining <= 0 {
				break
			}
			got, answer, err := runTry(ctx, c, spec, try, round, gen, existing, remaining)
			out.IDs = append(out.IDs, got...)
			if len(got) > 0 {
				out.Used[try.InstanceType] += len(got)
			}
			if answer == "ok" && len(got) < remaining {
				answer = "only " + strconv.Itoa(len(got)) + " granted"
			}
			out.Attempts = append(out.Attempts, fmt.Sprintf("%s in %s: %d of %d created (%s)", try.InstanceType, try.Zone, len(got), remaining, answer))
			remaining -= len(got)
			if err != nil {
				return out, runFailed(spec, out, size, err)
			}
		}
	}
	if len(out.IDs) == 0 {
		return out, shortfall(spec, out)
	}
	// Only new nodes and existing ones not seen Running are waited for: describing the whole
	// pool on every wave of a rolling update made the update's calls grow with size x waves.
	var known []cloud.Instance
	for _, in := range existing {
		if in.Status == "Running" {
			known = append(known, in)
		}
	}
	running, err := c.WaitInstancesRunning(ctx, idsNotIn(out.IDs, known))
	if err != nil {
		return out, err
	}
	out.Running = append(running, known...)
	cloud.SortInstances(out.Running)
	if len(out.IDs) < spec.MinSize {
		return out, shortfall(spec, out)
	}
	return out, nil
}

func shortfall(spec Spec, out Outcome) error {
	return fmt.Errorf("the pool reached %d nodes, below min_size = %d: not enough stock. Tried, in order:\n  %s\n"+
		"Every node that was created is recorded in the state. Add zones to zone_ids, set instance_type_fallback = true, "+
		"lower min_size, or try again later.", len(out.IDs), spec.MinSize, strings.Join(out.Attempts, "\n  "))
}

// runFailed explains an answer that stops the pool from growing: one that no other zone or type
// would change. The GPU quota gets its own words: ECS has no API the provider could read it from
// at plan time, so this is where the user learns about it.
func runFailed(spec Spec, out Outcome, size int, err error) error {
	tried := strings.Join(out.Attempts, "\n  ")
	if cloud.IsCode(err, "QuotaExceed.ElasticQuota") {
		return fmt.Errorf("the account's GPU quota ran out after %d of %d nodes (%d GPUs each) were created. "+
			"The quota is account-wide, so no other zone or type was tried, and ECS has no API that reads it, "+
			"so it cannot be checked at plan time. Raise the elastic GPU quota in the Quota Center, release "+
			"other GPU instances, or lower size (and min_size). Every node that was created is recorded in the state.\n"+
			"Tried, in order:\n  %s\nService answer: %w", len(out.IDs), size, GPUsPerNode(spec), tried, err)
	}
	return fmt.Errorf("creating nodes stopped after %d of %d nodes. Tried, in order:\n  %s\n"+
		"Every node that was created is recorded in the state; the next apply goes on from there. Cause: %w",
		len(out.IDs), size, tried, err)
}

// GPUsPerNode is the GPUs of the pool's planned instance type, from the catalog (0 for a CPU type
// or one the catalog does not know): derived from the type, not from the pool's gpus_per_node
// input, which is null on a pinned type or the scenario's default count.
func GPUsPerNode(spec Spec) int {
	if len(spec.Types) == 0 {
		return 0
	}
	it, _ := catalog.LookupInstanceType(spec.Types[0])
	return it.GPUs
}

// runTry asks one (zone, type) pair for up to want nodes in concurrent batches of at most 100,
// each with MinAmount 1 so partial stock is taken. It returns what was created and the answer
// that stopped it ("ok" or the vendor code).
func runTry(ctx context.Context, c *cloud.Client, spec Spec, try poolplan.Try, round int, gen string, existing []cloud.Instance, want int) ([]string, string, error) {
	if spec.Network.VSwitchIDs[try.Zone] == "" {
		return nil, "no vSwitch of the network in this zone", nil
	}
	batches, err := poolplan.Split(want, placementSlots(spec.Network, existing))
	if err != nil {
		return nil, "placement groups full", err
	}
	var (
		mu      sync.Mutex
		created []string
		answers []string
	)
	err = cloud.RunConcurrently(batches, batchWorkers, func(b poolplan.Batch) error {
		ids, err := c.RunInstances(ctx, runRequest(spec, try, b, batchClientToken(spec.PoolID, gen, round, b.Index)))
		mu.Lock()
		defer mu.Unlock()
		created = append(created, ids...)
		switch {
		case err == nil:
			return nil
		case cloud.IsCode(err, outOfStockCodes...):
			answers = append(answers, cloud.ErrorCode(err))
			return nil
		default:
			return err
		}
	})
	answer := "ok"
	if len(answers) > 0 {
		answer = answers[0]
	}
	if err != nil {
		answer = cloud.ErrorCode(err)
		if answer == "" {
			answer = "error"
		}
	}
	return created, answer, err
}

// placementSlots are the free places of a low-latency network's deployment sets, counting the
// pool's existing nodes; none (no limit) for other placements.
func placementSlots(n Network, existing []cloud.Instance) []poolplan.Slot {
	if n.Placement != netplan.PlacementLowLatency {
		return nil
	}
	used := map[string]int{}
	for _, in := range existing {
		used[in.DeploymentSetID]++
	}
	var slots []poolplan.Slot
	for _, ds := range n.DeploymentSets {
		slots = append(slots, poolplan.Slot{DeploymentSetID: ds.ID, Free: netplan.PlacementGroupSize - max(ds.Instances, used[ds.ID])})
	}
	return slots
}

// runRequest builds the RunInstances call of one batch.
func runRequest(spec Spec, try poolplan.Try, b poolplan.Batch, token string) cloud.RunInstancesInput {
	in := cloud.RunInstancesInput{
		ClientToken:     token,
		InstanceType:    try.InstanceType,
		ZoneID:          try.Zone,
		ImageID:         spec.ImageID,
		RAMRoleName:     spec.RAMRole,
		SecurityGroupID: spec.Network.SecurityGroupID,
		VSwitchID:       spec.Network.VSwitchIDs[try.Zone],
		Amount:          b.Amount,
		MinAmount:       1,
		// No HostName: ECS numbers a batch's host names per call (001, 002, ...), so two calls
		// (a pool over 100 nodes, a scale-out, a replacement wave) would give two nodes the same
		// host name, which kubelet registers as the node name. ECS's default host name
		// (iZ<id>Z) is unique; the instance name keeps the pool's name for the console.
		InstanceName:    spec.Name,
		UniqueSuffix:    true,
		DeploymentSetID: b.DeploymentSetID,
		HPCClusterID:    spec.HPCCluster,
		SystemDisk:      spec.SystemDisk.cloudDisk(),
		ERDMA:           spec.ERDMA,
		UserData:        spec.UserData,
		// The same tags as an autoscaling pool's nodes (NodeTags); their count was checked at plan.
		Tags: nodeTagList(spec),
	}
	for _, d := range spec.DataDisks {
		in.DataDisks = append(in.DataDisks, d.cloudDisk())
	}
	if spec.Spot != "NoSpot" {
		in.SpotStrategy = spec.Spot
		in.SpotPriceLimit = spec.SpotLimit
	}
	if spec.AutoRelease > 0 {
		in.AutoReleaseTime = time.Now().UTC().Add(spec.AutoRelease).Format("2006-01-02T15:04:05Z")
	}
	return in
}

// batchClientToken is the idempotency token of one RunInstances batch: the same for a resent call
// of one (pool, generation, round, batch), different for any other. A round is one (zone, instance
// type) try; poolplan.Generation says why the generation is in it.
func batchClientToken(poolID, generation string, round, batch int) string {
	return cloud.ClientToken(0, "pool-batch", poolID, generation, strconv.Itoa(round), strconv.Itoa(batch))
}

// idsNotIn is ids without those of nodes.
func idsNotIn(ids []string, nodes []cloud.Instance) []string {
	skip := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		skip[n.ID] = true
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return skip[id] })
}

func withoutIDs(in []cloud.Instance, ids []string) []cloud.Instance {
	gone := map[string]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	return slices.DeleteFunc(slices.Clone(in), func(i cloud.Instance) bool { return gone[i.ID] })
}
