package ecs

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// call is one ECS request: the core's call with the ECS records at hand.
type call struct {
	*core.Call
	st *Store
}

func newCall(c *core.Call) *call { return &call{Call: c, st: StoreIn(c.Stores)} }

// handle adapts an ECS handler to the core's action table.
func handle(fn func(c *call) (any, *core.Error)) core.Handler {
	return func(c *core.Call) (any, *core.Error) { return fn(newCall(c)) }
}

// network is the VPC API's records, where instances find their vSwitch.
func (c *call) network() *emuvpc.Store { return emuvpc.StoreIn(c.Stores) }

// allocIP hands out a vSwitch's next private address; eipAddress is the public address made
// from an id sequence value (the same rule as an EIP's).
var (
	allocIP    = (*emuvpc.VSwitch).NextAddress
	eipAddress = emuvpc.PublicAddress
)

// status derives the visible status from phase and elapsed time: boot runs Pending for the
// first half of the boot time, Starting for the second.
func status(env core.Env, in *instance, now time.Time) string {
	el := time.Duration(now.UnixNano() - in.PhaseAt)
	bt := env.BootTime()
	switch in.Phase {
	case phaseBoot:
		if el < bt/2 {
			return "Pending"
		}
		if el < bt {
			return "Starting"
		}
		return "Running"
	case phaseStarting:
		if el < bt/2 {
			return "Starting"
		}
		return "Running"
	case phaseShutdown:
		if el < time.Duration(in.ShutdownDelay)+bt/2 {
			return "Stopping"
		}
		return "Stopped"
	case phaseStopping:
		if el < bt/2 {
			return "Stopping"
		}
		return "Stopped"
	}
	return "Running"
}

func (c *call) status(in *instance) string { return status(c.Env, in, c.Now) }

// visible hides an instance from Describe during the consistency delay and
// once its AutoReleaseTime has passed (the janitor removes it shortly).
func (d *Store) visible(in *instance, now time.Time) bool {
	if cd := d.settings.ConsistencyDelay; cd > 0 && now.UnixNano()-in.Created < int64(cd) {
		return false
	}
	return in.AutoRelease == 0 || in.AutoRelease > now.Unix()
}

func (c *call) visible(in *instance) bool { return c.st.visible(in, c.Now) }

// release releases an instance: its records and indexes go, explicitly set stock comes back, its
// interfaces' tags go with it, and the other products forget it (the VPC API's EIPs directly,
// the products above ECS through core.Released).
func (c *call) release(in *instance) {
	d := c.st
	d.removeInstance(in)
	if len(d.ENITags) > 0 { // an instance's interfaces go with it, and their tags too
		delete(d.ENITags, primaryENI(in))
		for _, n := range in.NICs {
			delete(d.ENITags, n.ID)
		}
	}
	if isSpot(in.Spot) {
		if z := core.SpotStock(c.Stores)[in.Zone]; z != nil {
			if _, ok := z[in.Type]; ok {
				z[in.Type]++
			}
		}
	}
	core.Released(c.Stores, in.ID)
	c.network().ForgetInstance(in.ID)
}

// zones answers the zones of the call's region.
func (c *call) zones() []string {
	for _, r := range c.Env.Regions() {
		if r.ID == c.Region {
			return r.Zones
		}
	}
	return nil
}

// page reads PageNumber/PageSize, capped at maxSize (core.Page).
func (c *call) page(maxSize int) (number, size int, e *core.Error) { return core.Page(c.P, maxSize) }
