package ess

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// What the emulator's admin endpoints read and do to ESS. They are no RPC actions: the Server
// calls them under its write (or read) lock with a call that carries the state, the Env and the
// time, and no request.

// ReclaimSpot releases spot instances the way the vendor does when it takes spot capacity back
// (after its notice in the instance metadata, which the emulator does not serve). A scaling
// group that loses instances this way and has SpotInstanceRemedy set starts an activity that
// launches replacements up to the size it had (through the same spot mix, so the replacements
// are spot again when spot stock allows, pay-as-you-go with CompensateWithOnDemand otherwise).
// Nothing changes when an id is not a live spot instance.
func ReclaimSpot(cc *core.Call, ids []string) error {
	c := newCall(cc)
	for _, id := range ids {
		in, ok := c.instance(id)
		if !ok {
			return fmt.Errorf("instance %s does not exist", id)
		}
		if !isSpot(in.Spot) {
			return fmt.Errorf("instance %s is pay-as-you-go (SpotStrategy %s): only spot instances are reclaimed", id, cmp.Or(in.Spot, "NoSpot"))
		}
	}
	before := map[*scalingGroup]int{}
	for _, g := range c.st.Groups {
		for _, m := range g.Members {
			if slices.Contains(ids, m.Instance) {
				before[g] = len(c.liveMembers(g))
				break
			}
		}
	}
	for _, id := range ids {
		c.release(id)
	}
	for g, n := range before {
		c.Region = g.Region
		if g.SpotRemedy && g.Active && g.DeletedAt == 0 && c.inProgress(g) == nil {
			if target := min(max(n, g.Min), g.Max); target > len(c.liveMembers(g)) {
				c.startActivity(g, target, "Spot instances were reclaimed; SpotInstanceRemedy launches replacements.")
			}
		}
	}
	return nil
}

// Resources lists the scaling groups not yet gone (Deleting ones included) for
// /_emulator/resources, in no particular order.
func Resources(cc *core.Call) []map[string]any {
	c := newCall(cc)
	var out []map[string]any
	for _, g := range c.st.Groups {
		if c.groupGone(g) {
			continue
		}
		out = append(out, map[string]any{"id": g.ID, "region": g.Region, "name": g.Name,
			"state": groupState(g), "min_size": g.Min, "max_size": g.Max, "instances": len(c.liveMembers(g)), "tags": core.TagMap(g.Tags)})
	}
	return out
}
