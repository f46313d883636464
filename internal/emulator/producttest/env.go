// Package producttest gives a product package's tests what the Server would: an Env and a world
// with a VPC and a vSwitch, so a handler can be called beside its code without the assembly.
package producttest

import (
	"fmt"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// Region is the region of every test call; its zone Region+"-a" exists.
const Region = "cn-wulanchabu"

// Env is the Server as a product sees it: one zone, ids from a counter, asynchronous states
// that settle one second after they start.
type Env struct{ seq uint64 }

// NewID makes an id as long as the Server's (some products cut pieces out of it).
func (e *Env) NewID(prefix string) string { return fmt.Sprintf("%s-em%018d", prefix, e.NextSeq()) }

// NextSeq bumps the sequence.
func (e *Env) NextSeq() uint64 {
	e.seq++
	return e.seq
}

// Seq answers the sequence's current value.
func (e *Env) Seq() uint64 { return e.seq }

// ZoneExists knows Region's zone a only.
func (e *Env) ZoneExists(region, zone string) bool { return region == Region && zone == Region+"-a" }

// AsyncStatus is pending for a second after since, done after.
func (e *Env) AsyncStatus(since int64, now time.Time, pending, done string) string {
	if now.Sub(time.Unix(0, since)) < time.Second {
		return pending
	}
	return done
}

// Regions serves Region with its one zone.
func (e *Env) Regions() []core.Region {
	return []core.Region{{ID: Region, LocalName: Region, Zones: []string{Region + "-a"}}}
}

// BootTime is two seconds: twice the time an asynchronous state takes, as at the Server.
func (e *Env) BootTime() time.Duration { return 2 * time.Second }

// KeyUser is "": the test calls are signed with the account's own key.
func (e *Env) KeyUser() string { return "" }

// World is every registered store with one Available VPC and one vSwitch in it.
type World struct {
	Stores       *core.Stores
	Env          *Env
	Now          time.Time
	VpcID, VswID string
}

// NewWorld builds a World. The stores are those of the product packages the test binary links.
func NewWorld() *World {
	w := &World{Stores: core.NewStores(), Env: &Env{}, Now: time.Unix(1_700_000_000, 0), VpcID: "vpc-1", VswID: "vsw-1"}
	net := emuvpc.StoreIn(w.Stores)
	net.Vpcs[w.VpcID] = &emuvpc.VPC{ID: w.VpcID, Region: Region, CIDR: "10.0.0.0/16"}
	net.VSwitches[w.VswID] = &emuvpc.VSwitch{ID: w.VswID, Region: Region, VpcID: w.VpcID, Zone: Region + "-a", CIDR: "10.0.1.0/24"}
	return w
}

// Call runs a handler as the dispatcher would, in Region at w.Now.
func (w *World) Call(fn core.Handler, version string, p core.Params) (any, *core.Error) {
	return fn(&core.Call{P: p, Version: version, Region: Region, Now: w.Now, ReqID: "req", Stores: w.Stores, Env: w.Env})
}
