package ess

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// call is one ESS request: the core's call with the ESS records at hand, so the handlers read
// c.st rather than looking the store up at every step.
type call struct {
	*core.Call
	st *Store
}

func newCall(c *core.Call) *call { return &call{Call: c, st: StoreIn(c.Stores)} }

// handle adapts an ESS handler to the core's action table.
func handle(fn func(c *call) (any, *core.Error)) core.Handler {
	return func(c *core.Call) (any, *core.Error) { return fn(newCall(c)) }
}

// instance reads one of a group's instances from ECS; false once it was released.
func (c *call) instance(id string) (core.Instance, bool) { return core.ECS().Instance(c.Call, id) }

// release releases one of a group's auto-created instances through ECS.
func (c *call) release(id string) { core.ECS().Release(c.Call, id) }

// groupGone says whether a deleted group has finished deleting: a group is Deleting for half
// the boot time after DeleteScalingGroup, as any asynchronous state, then gone.
func (c *call) groupGone(g *scalingGroup) bool { return groupGone(c.Env, g, c.Now) }

func groupGone(env core.Env, g *scalingGroup, now time.Time) bool {
	return g.DeletedAt != 0 && env.AsyncStatus(g.DeletedAt, now, "Deleting", "Gone") == "Gone"
}

// isSpot says whether a SpotStrategy asks for a spot instance.
func isSpot(strategy string) bool { return strategy != "" && strategy != "NoSpot" }

// idFilter reads an id filter the SDK sends either as Name or as Name.N.
func idFilter(p core.Params, name string) []string {
	out := p.List(name)
	if v := p[name]; v != "" {
		out = append(out, v)
	}
	return out
}
