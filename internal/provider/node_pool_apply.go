package provider

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

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

// growOutcome is what a grow or reconcile left behind: every node the pool has now (including
// ones that failed to start), and the story of each zone and type tried.
type growOutcome struct {
	IDs      []string
	Attempts []string
	Used     map[string]int // instance type -> nodes created with it
	// Running holds every node as the final wait saw it, when that wait covered all of IDs;
	// finish then records them without describing the pool again.
	Running []cloud.Instance
}

// grow brings the pool from the nodes in existing to size, trying zones and (if allowed) types in
// order, then waits for every node to run. The outcome lists every node that exists even when it
// returns an error, so the caller records them all.
// operation names this grow uniquely (see poolplan.Generation).
func (r *nodePoolResource) grow(ctx context.Context, spec poolSpec, operation string, existing []cloud.Instance, size int) (growOutcome, error) {
	out := growOutcome{IDs: instanceIDs(existing), Used: map[string]int{}}
	remaining := size - len(existing)
	if remaining > 0 {
		gen := poolplan.Generation(operation, out.IDs)
		for round, try := range poolplan.Tries(spec.Zones, spec.Types, spec.Fallback) {
			if remaining <= 0 {
				break
			}
			got, answer, err := r.runTry(ctx, spec, try, round, gen, existing, remaining)
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
				return out, r.runFailed(spec, out, size, err)
			}
		}
	}
	if len(out.IDs) == 0 {
		return out, r.shortfall(spec, out)
	}
	// Only new nodes and existing ones not seen Running are waited for: describing the whole
	// pool on every wave of a rolling update made the update's calls grow with size x waves.
	var known []cloud.Instance
	for _, in := range existing {
		if in.Status == "Running" {
			known = append(known, in)
		}
	}
	running, err := r.client.WaitInstancesRunning(ctx, idsNotIn(out.IDs, known))
	if err != nil {
		return out, err
	}
	out.Running = append(running, known...)
	cloud.SortInstances(out.Running)
	if len(out.IDs) < spec.MinSize {
		return out, r.shortfall(spec, out)
	}
	return out, nil
}

func (r *nodePoolResource) shortfall(spec poolSpec, out growOutcome) error {
	return fmt.Errorf("the pool reached %d nodes, below min_size = %d: not enough stock. Tried, in order:\n  %s\n"+
		"Every node that was created is recorded in the state. Add zones to zone_ids, set instance_type_fallback = true, "+
		"lower min_size, or try again later.", len(out.IDs), spec.MinSize, strings.Join(out.Attempts, "\n  "))
}

// runFailed explains an answer that stops the pool from growing: one that no other zone or type
// would change. The GPU quota gets its own words: ECS has no API the provider could read it from
// at plan time, so this is where the user learns about it.
func (r *nodePoolResource) runFailed(spec poolSpec, out growOutcome, size int, err error) error {
	tried := strings.Join(out.Attempts, "\n  ")
	if cloud.IsCode(err, "QuotaExceed.ElasticQuota") {
		return fmt.Errorf("the account's GPU quota ran out after %d of %d nodes (%d GPUs each) were created. "+
			"The quota is account-wide, so no other zone or type was tried, and ECS has no API that reads it, "+
			"so it cannot be checked at plan time. Raise the elastic GPU quota in the Quota Center, release "+
			"other GPU instances, or lower size (and min_size). Every node that was created is recorded in the state.\n"+
			"Tried, in order:\n  %s\nService answer: %w", len(out.IDs), size, gpusPerNode(spec), tried, err)
	}
	return fmt.Errorf("creating nodes stopped after %d of %d nodes. Tried, in order:\n  %s\n"+
		"Every node that was created is recorded in the state; the next apply goes on from there. Cause: %w",
		len(out.IDs), size, tried, err)
}

func gpusPerNode(spec poolSpec) int {
	if len(spec.Types) == 0 {
		return 0
	}
	it, _ := catalog.LookupInstanceType(spec.Types[0])
	return it.GPUs
}

// runTry asks one (zone, type) pair for up to want nodes in concurrent batches of at most 100,
// each with MinAmount 1 so partial stock is taken. It returns what was created and the answer
// that stopped it ("ok" or the vendor code).
func (r *nodePoolResource) runTry(ctx context.Context, spec poolSpec, try poolplan.Try, round int, gen string, existing []cloud.Instance, want int) ([]string, string, error) {
	vswitch := spec.Network.VSwitchIDs[try.Zone]
	if vswitch == "" {
		return nil, "no vSwitch of the network in this zone", nil
	}
	var slots []poolplan.Slot
	if spec.Network.Placement == netplan.PlacementLowLatency {
		used := map[string]int{}
		for _, in := range existing {
			used[in.DeploymentSetID]++
		}
		for _, ds := range spec.Network.DeploymentSets {
			slots = append(slots, poolplan.Slot{DeploymentSetID: ds.ID, Free: netplan.PlacementGroupSize - max(ds.Instances, used[ds.ID])})
		}
	}
	batches, err := poolplan.Split(want, slots)
	if err != nil {
		return nil, "placement groups full", err
	}
	var (
		mu      sync.Mutex
		created []string
		answers []string
	)
	err = cloud.RunConcurrently(batches, batchWorkers, func(b poolplan.Batch) error {
		req, err := r.runRequest(spec, try, b, batchClientToken(spec.PoolID, gen, round, b.Index))
		if err != nil {
			return err
		}
		ids, err := r.client.RunInstances(ctx, req)
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

// runRequest builds the RunInstances call of one batch.
func (r *nodePoolResource) runRequest(spec poolSpec, try poolplan.Try, b poolplan.Batch, token string) (cloud.RunInstancesInput, error) {
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
		SystemDisk:      cloud.Disk{Category: spec.SystemDisk.Category, PerformanceLevel: spec.SystemDisk.Level, SizeGiB: spec.SystemDisk.SizeGiB},
		ERDMA:           spec.ERDMA,
		UserData:        spec.UserData,
	}
	for _, d := range spec.DataDisks {
		in.DataDisks = append(in.DataDisks, cloud.Disk{Category: d.Category, PerformanceLevel: d.Level, SizeGiB: d.SizeGiB})
	}
	if spec.Spot != "NoSpot" {
		in.SpotStrategy = spec.Spot
		in.SpotPriceLimit = spec.SpotLimit
	}
	if spec.AutoRelease > 0 {
		in.AutoReleaseTime = time.Now().UTC().Add(spec.AutoRelease).Format("2006-01-02T15:04:05Z")
	}
	// The same tags as an autoscaling pool's nodes (nodeTags); their count was checked at plan.
	tags := nodeTags(spec)
	for _, k := range sortedKeys(tags) {
		in.Tags = append(in.Tags, cloud.Tag{Key: k, Value: tags[k]})
	}
	return in, nil
}

// reconcile brings an existing pool to the plan: user tags in place, outdated nodes rolled in
// waves of at most max_unavailable, then the size (newest nodes go first on the way down).
func (r *nodePoolResource) reconcile(ctx context.Context, spec poolSpec, plan *nodePoolModel) (growOutcome, error) {
	current, err := r.client.ListInstancesByTags(ctx, map[string]string{tagPool: spec.PoolID})
	if err != nil {
		return growOutcome{}, err
	}
	out := growOutcome{IDs: instanceIDs(current), Used: map[string]int{}}
	// Every grow of this update gets its own ClientTokens, apart from the create's and from
	// earlier updates', even when the pool it starts from is empty.
	operation := "update-" + newPoolID()[3:]

	if err := r.retag(ctx, spec, current); err != nil {
		return out, err
	}

	// Shrink first: no point rolling nodes that are about to go.
	if extra := len(current) - spec.Size; extra > 0 {
		victims := poolplan.ScaleDownVictims(toPlanNodes(current, spec.SpecHash), extra)
		tflog.Info(ctx, fmt.Sprintf("scaling node pool %s down by %d nodes", spec.PoolID, len(victims)))
		if err := r.syncBackends(ctx, spec.LoadBalancerID, spec.PoolID, withoutIDs(current, victims)); err != nil {
			return out, err
		}
		if err := r.removeNodes(ctx, victims); err != nil {
			return out, err
		}
		current = withoutIDs(current, victims)
		out.IDs = instanceIDs(current)
	}

	// Roll outdated nodes wave by wave.
	for i, wave := range poolplan.RollWaves(toPlanNodes(current, spec.SpecHash), spec.MaxUnavail) {
		tflog.Info(ctx, fmt.Sprintf("rolling node pool %s: wave %d replaces %d nodes", spec.PoolID, i+1, len(wave)))
		// The wave's nodes leave the load balancer before they go, their replacements join it
		// once running: the API is never sent to a node that is being deleted.
		if err := r.syncBackends(ctx, spec.LoadBalancerID, spec.PoolID, withoutIDs(current, wave)); err != nil {
			return out, err
		}
		if err := r.removeNodes(ctx, wave); err != nil {
			return out, err
		}
		current = withoutIDs(current, wave)
		waveOut, err := r.grow(ctx, spec, fmt.Sprintf("%s/wave-%d", operation, i+1), current, len(current)+len(wave))
		out.IDs, out.Attempts = waveOut.IDs, append(out.Attempts, waveOut.Attempts...)
		for k, v := range waveOut.Used {
			out.Used[k] += v
		}
		if err != nil {
			return out, err
		}
		current = waveOut.Running // every node of the pool, as the wave's wait saw it
		if err := r.syncBackends(ctx, spec.LoadBalancerID, spec.PoolID, current); err != nil {
			return out, err
		}
	}

	// Grow back to size: new nodes, or nodes deleted behind Terraform's back.
	grown, err := r.grow(ctx, spec, operation+"/size", current, spec.Size)
	out.IDs, out.Attempts, out.Running = grown.IDs, append(out.Attempts, grown.Attempts...), grown.Running
	for k, v := range grown.Used {
		out.Used[k] += v
	}
	return out, err
}

// retag puts the pool's current user tags on every node that lacks one and takes removed ones
// off every node (the first node's tags stand for the pool's).
func (r *nodePoolResource) retag(ctx context.Context, spec poolSpec, nodes []cloud.Instance) error {
	if len(nodes) == 0 {
		return nil
	}
	_, stale := cloud.DiffTags(userTags(nodes[0].Tags), spec.UserTags)
	var needs []string
	for _, n := range nodes {
		if set, _ := cloud.DiffTags(n.Tags, spec.UserTags); len(set) > 0 {
			needs = append(needs, n.ID)
		}
	}
	if err := r.client.TagResources(ctx, cloud.KindInstance, needs, spec.UserTags); err != nil {
		return fmt.Errorf("tagging nodes: %w", err)
	}
	if err := r.client.UntagResources(ctx, cloud.KindInstance, instanceIDs(nodes), stale); err != nil {
		return fmt.Errorf("removing tags %s from nodes: %w", strings.Join(stale, ", "), err)
	}
	return nil
}

func (r *nodePoolResource) removeNodes(ctx context.Context, ids []string) error {
	if err := r.client.DeleteInstances(ctx, ids); err != nil {
		return err
	}
	return r.client.WaitInstancesGone(ctx, ids)
}

func toPlanNodes(in []cloud.Instance, specHash string) []poolplan.Node {
	out := make([]poolplan.Node, 0, len(in))
	for _, i := range in {
		out = append(out, poolplan.Node{ID: i.ID, CreationTime: i.CreationTime, Outdated: i.Tags[tagSpec] != specHash})
	}
	return out
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

// finish records the pool's nodes, GPU count and price after a create or update, whatever its
// outcome; the computed values the plan left unknown are filled here. A control plane's load
// balancer gets the running nodes as its backend servers.
func (r *nodePoolResource) finish(ctx context.Context, spec poolSpec, plan *nodePoolModel, out growOutcome, diags *diag.Diagnostics) {
	nodes := r.recordNodes(ctx, spec, plan, out, diags)
	if err := r.syncBackends(ctx, spec.LoadBalancerID, spec.PoolID, nodes); err != nil {
		diags.AddError(fmt.Sprintf("node pool (%s)", spec.PoolID), err.Error())
	}
}

// recordNodes is finish's part that records the nodes (and what follows from them); it returns
// them as read.
func (r *nodePoolResource) recordNodes(ctx context.Context, spec poolSpec, plan *nodePoolModel, out growOutcome, diags *diag.Diagnostics) []cloud.Instance {
	nodes, err := out.Running, error(nil)
	if len(nodes) != len(out.IDs) {
		nodes, err = r.client.DescribeInstancesByID(ctx, out.IDs)
	}
	if err != nil {
		// The ids alone still keep the nodes out of the orphan pile.
		diags.AddWarning(fmt.Sprintf("node pool (%s): could not read the nodes back", spec.PoolID), err.Error())
		nodes = nodes[:0]
		for _, id := range out.IDs {
			nodes = append(nodes, cloud.Instance{ID: id, Status: "Unknown"})
		}
	}
	diags.Append(plan.setNodes(ctx, nodes)...)
	if plan.ZoneIDs.IsUnknown() {
		plan.ZoneIDs = stringList(spec.Zones)
	}
	if plan.EstimatedHourlyPrice.IsUnknown() {
		plan.EstimatedHourlyPrice = types.Float64Value(r.nodesPrice(ctx, spec, nodes, diags))
	}
	for typ, n := range out.Used {
		if typ != spec.Types[0] {
			diags.AddWarning(fmt.Sprintf("node pool (%s): %d nodes fell back to %s", spec.PoolID, n, typ),
				fmt.Sprintf("%s was out of stock; instance_type_fallback allowed the next candidate. nodes[*].instance_type shows each node's type.", spec.Types[0]))
		}
	}
	if n := len(nodes); n >= spec.MinSize && n < spec.Size {
		diags.AddWarning(fmt.Sprintf("node pool (%s) has %d of %d nodes", spec.PoolID, n, spec.Size),
			"Stock ran out above min_size. Tried:\n  "+strings.Join(out.Attempts, "\n  ")+"\nThe next apply tries again for the rest.")
	}
	return nodes
}

// nodesPrice is what the nodes cost per hour (0 for none); a failed price lookup is a warning.
func (r *nodePoolResource) nodesPrice(ctx context.Context, spec poolSpec, nodes []cloud.Instance, diags *diag.Diagnostics) float64 {
	if len(nodes) == 0 {
		return 0
	}
	price, _, err := r.client.HourlyPrice(ctx, spec.Types[0], nodes[0].ZoneID, spotStrategyForPrice(spec), len(nodes))
	if err != nil {
		diags.AddWarning(fmt.Sprintf("node pool (%s): no price estimate", spec.PoolID), err.Error())
	}
	return price
}

func spotStrategyForPrice(spec poolSpec) string {
	if spec.Spot == "NoSpot" {
		return ""
	}
	return spec.Spot
}

// batchClientToken is the idempotency token of one RunInstances batch: the same for a resent call
// of one (pool, generation, round, batch), different for any other. A round is one (zone, instance
// type) try; poolplan.Generation says why the generation is in it.
func batchClientToken(poolID, generation string, round, batch int) string {
	return cloud.ClientToken(0, "pool-batch", poolID, generation, strconv.Itoa(round), strconv.Itoa(batch))
}
