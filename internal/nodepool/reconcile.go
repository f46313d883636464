package nodepool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/poolplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// Reconcile brings an existing pool to the spec: user tags in place, outdated nodes rolled in
// waves of at most MaxUnavail, then the size (newest nodes go first on the way down).
func Reconcile(ctx context.Context, c *cloud.Client, spec Spec) (Outcome, error) {
	current, err := c.ListInstancesByTags(ctx, map[string]string{tagging.Pool: spec.PoolID})
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{IDs: InstanceIDs(current), Used: map[string]int{}}
	// Every grow of this update gets its own ClientTokens, apart from the create's and from
	// earlier updates', even when the pool it starts from is empty.
	operation := "update-" + NewPoolID()[3:]

	if err := Retag(ctx, c, spec, current); err != nil {
		return out, err
	}

	// Shrink first: no point rolling nodes that are about to go.
	if extra := len(current) - spec.Size; extra > 0 {
		victims := poolplan.ScaleDownVictims(toPlanNodes(current, spec.SpecHash), extra)
		tflog.Info(ctx, fmt.Sprintf("scaling node pool %s down by %d nodes", spec.PoolID, len(victims)))
		if err := SyncBackends(ctx, c, spec.LoadBalancerID, spec.PoolID, withoutIDs(current, victims)); err != nil {
			return out, err
		}
		if err := out.drainNodes(ctx, c, spec, current, victims); err != nil {
			return out, err
		}
		if err := out.removeEtcdMembers(ctx, c, spec, current, victims); err != nil {
			return out, err
		}
		if err := out.removeNodes(ctx, c, victims); err != nil {
			return out, err
		}
		current = withoutIDs(current, victims)
		out.IDs = InstanceIDs(current)
	}

	current, err = roll(ctx, c, spec, operation, current, &out)
	if err != nil {
		return out, err
	}

	// Grow back to size: new nodes, or nodes deleted behind Terraform's back.
	grown, err := Grow(ctx, c, spec, operation+"/size", current, spec.Size)
	out.add(grown)
	out.Running = grown.Running
	return out, err
}

// roll replaces the outdated nodes among current wave by wave and answers the pool's nodes
// after the last wave, as its wait saw them.
func roll(ctx context.Context, c *cloud.Client, spec Spec, operation string, current []cloud.Instance, out *Outcome) ([]cloud.Instance, error) {
	waves := poolplan.RollWaves(toPlanNodes(current, spec.SpecHash), spec.MaxUnavail)
	if len(waves) > 0 {
		if err := RaiseClusterVersion(ctx, c, spec, current); err != nil {
			return current, err
		}
	}
	for i, wave := range waves {
		tflog.Info(ctx, fmt.Sprintf("rolling node pool %s: wave %d replaces %d nodes", spec.PoolID, i+1, len(wave)))
		// The wave's nodes leave the load balancer before they go, their replacements join it
		// once running: the API is never sent to a node that is being deleted.
		if err := SyncBackends(ctx, c, spec.LoadBalancerID, spec.PoolID, withoutIDs(current, wave)); err != nil {
			return current, err
		}
		if err := out.drainNodes(ctx, c, spec, current, wave); err != nil {
			return current, err
		}
		if err := out.removeEtcdMembers(ctx, c, spec, current, wave); err != nil {
			return current, err
		}
		if err := out.removeNodes(ctx, c, wave); err != nil {
			return current, err
		}
		current = withoutIDs(current, wave)
		waveOut, err := Grow(ctx, c, spec, fmt.Sprintf("%s/wave-%d", operation, i+1), current, len(current)+len(wave))
		out.add(waveOut)
		if err != nil {
			return current, err
		}
		joining := idsNotIn(InstanceIDs(waveOut.Running), current)
		current = waveOut.Running // every node of the pool, as the wave's wait saw it
		if err := SyncBackends(ctx, c, spec.LoadBalancerID, spec.PoolID, current); err != nil {
			return current, err
		}
		if i < len(waves)-1 { // the next wave goes once these have joined (join_wait.go)
			if err := WaitJoined(ctx, c, spec.Name, joining, spec.JoinTimeout); err != nil {
				return current, err
			}
		}
	}
	return current, nil
}

// add takes a later grow's nodes (which include the earlier ones) and appends its story.
func (o *Outcome) add(later Outcome) {
	o.IDs, o.Attempts = later.IDs, append(o.Attempts, later.Attempts...)
	o.Warnings = append(o.Warnings, later.Warnings...)
	for k, v := range later.Used {
		o.Used[k] += v
	}
}

// Retag puts the pool's current user tags on every node that lacks one and takes removed ones
// off every node (the first node's tags stand for the pool's).
func Retag(ctx context.Context, c *cloud.Client, spec Spec, nodes []cloud.Instance) error {
	if len(nodes) == 0 {
		return nil
	}
	_, stale := cloud.DiffTags(tagging.UserTags(nodes[0].Tags), spec.UserTags)
	var needs []string
	for _, n := range nodes {
		if set, _ := cloud.DiffTags(n.Tags, spec.UserTags); len(set) > 0 {
			needs = append(needs, n.ID)
		}
	}
	if err := c.TagResources(ctx, cloud.KindInstance, needs, spec.UserTags); err != nil {
		return fmt.Errorf("tagging nodes: %w", err)
	}
	if err := c.UntagResources(ctx, cloud.KindInstance, InstanceIDs(nodes), stale); err != nil {
		return fmt.Errorf("removing tags %s from nodes: %w", strings.Join(stale, ", "), err)
	}
	return nil
}

// removeNodes drains and deletes nodes of a shrink or a roll wave (RemoveNodes), keeping its
// warnings in the outcome.
func (o *Outcome) removeNodes(ctx context.Context, c *cloud.Client, ids []string) error {
	warnings, err := RemoveNodes(ctx, c, ids)
	o.Warnings = append(o.Warnings, warnings...)
	return err
}

// drainNodes is DrainNodes, keeping its warnings in the outcome.
func (o *Outcome) drainNodes(ctx context.Context, c *cloud.Client, spec Spec, current []cloud.Instance, victims []string) error {
	warnings, err := DrainNodes(ctx, c, spec, current, victims)
	o.Warnings = append(o.Warnings, warnings...)
	return err
}

// removeEtcdMembers is RemoveEtcdMembers, keeping its warning in the outcome.
func (o *Outcome) removeEtcdMembers(ctx context.Context, c *cloud.Client, spec Spec, current []cloud.Instance, victims []string) error {
	warning, err := RemoveEtcdMembers(ctx, c, spec, current, victims)
	if warning != "" {
		o.Warnings = append(o.Warnings, warning)
	}
	return err
}

// toPlanNodes: a node is outdated, and rolled, when it was built from another spec or when the
// GPU health agent on it asked for a new instance (tagging.ReplaceRequested): a GPU no reset
// mends is replaced the way a changed spec replaces a node, wave by wave, stopped normally first.
func toPlanNodes(in []cloud.Instance, specHash string) []poolplan.Node {
	out := make([]poolplan.Node, 0, len(in))
	for _, i := range in {
		_, replace := i.Tags[tagging.ReplaceRequested]
		out = append(out, poolplan.Node{ID: i.ID, CreationTime: i.CreationTime, Outdated: i.Tags[tagging.Spec] != specHash || replace})
	}
	return out
}

// NewPoolID returns a fresh pool id. Random, not derived from the name: a pool destroyed and
// created again must not reuse the ClientTokens of the first one, or the service would answer
// with the old (deleted) instances.
func NewPoolID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "np-" + hex.EncodeToString(b)
}
