package vpc

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Records of the network products added for cluster egress: NAT gateways with their SNAT
// entries and elastic IPs (VPC API, 2016-04-28); the Classic Load Balancers are package slb's.
// Like the other records they hold only what the APIs return; the answers are built into the
// SDK's structs by nat.go, snat.go, eip.go.
//
// Asynchronous states are derived from timestamps (half of Config.BootTime per transition, as
// for VPCs: core.Env.AsyncStatus), so nothing has to tick them along: a NAT gateway is Creating
// then Available, and Deleting until it is gone; an EIP is Associating then InUse,
// Unassociating then Available, Releasing until gone; an SNAT entry is Pending then Available,
// Deleting until gone. Records whose deletion has settled are invisible everywhere and purged
// by the next write.

// NatGateway is one enhanced NAT gateway with its SNAT table's entries.
type NatGateway struct {
	ID           string       `json:"id"`
	Region       string       `json:"region"`
	VpcID        string       `json:"vpc"`
	VSwitchID    string       `json:"vsw"`
	Zone         string       `json:"zone"`
	Name         string       `json:"name,omitempty"`
	Desc         string       `json:"desc,omitempty"`
	NetworkType  string       `json:"net"`        // internet or intranet
	ChargeType   string       `json:"charge"`     // InternetChargeType: PayByLcu or PayBySpec
	EipBindMode  string       `json:"eip_bind"`   // MULTI_BINDED or NAT
	PrivateIP    string       `json:"ip"`         // the gateway's address in its vSwitch
	SnatTable    string       `json:"snat_table"` // stb-…
	ForwardTable string       `json:"fwd_table"`  // ftb-…
	FullNatTable string       `json:"fnat_table"` // fulltb-…
	Created      int64        `json:"created"`    // unix nanoseconds
	DeletedAt    int64        `json:"deleted,omitempty"`
	Tags         []core.Tag   `json:"tags,omitempty"`
	Snat         []*SnatEntry `json:"snat,omitempty"`
}

// SnatEntry is one entry of a NAT gateway's SNAT table.
type SnatEntry struct {
	ID        string `json:"id"`
	Name      string `json:"name,omitempty"`
	SourceVSw string `json:"src_vsw,omitempty"`
	SourceNet string `json:"src_cidr"` // the vSwitch's CIDR when the source is a vSwitch
	SnatIP    string `json:"snat_ip"`  // comma-separated EIP addresses
	Created   int64  `json:"created"`
	DeletedAt int64  `json:"deleted,omitempty"`
}

// EIP association targets the emulator models.
const (
	EipTargetNat = "Nat"
	EipTargetECS = "EcsInstance"
)

// EIP is one elastic IP address.
type EIP struct {
	ID           string     `json:"id"`
	Region       string     `json:"region"`
	IP           string     `json:"ip"`
	Name         string     `json:"name,omitempty"`
	Desc         string     `json:"desc,omitempty"`
	Bandwidth    int        `json:"bw"`     // Mbit/s
	NetCharge    string     `json:"charge"` // InternetChargeType: PayByBandwidth or PayByTraffic
	InstCharge   string     `json:"inst_charge"`
	ISP          string     `json:"isp"`
	Created      int64      `json:"created"`
	Instance     string     `json:"instance,omitempty"` // bound to this NAT gateway or ECS instance
	InstanceType string     `json:"instance_type,omitempty"`
	AssocAt      int64      `json:"assoc_at,omitempty"`
	UnassocAt    int64      `json:"unassoc_at,omitempty"`
	ReleasedAt   int64      `json:"released,omitempty"`
	Tags         []core.Tag `json:"tags,omitempty"`
}

// settled reports whether a transition started at (unix nanoseconds) is over: the Server's
// AsyncStatus clock, which every product's asynchronous states share.
func settled(env core.Env, at int64, now time.Time) bool {
	return env.AsyncStatus(at, now, "pending", "done") == "done"
}

// Gone reports whether the gateway's deletion has settled: it is invisible everywhere.
func (n *NatGateway) Gone(env core.Env, now time.Time) bool {
	return n.DeletedAt != 0 && settled(env, n.DeletedAt, now)
}

// Gone reports whether the entry's deletion has settled.
func (e *SnatEntry) Gone(env core.Env, now time.Time) bool {
	return e.DeletedAt != 0 && settled(env, e.DeletedAt, now)
}

// Gone reports whether the address's release has settled.
func (e *EIP) Gone(env core.Env, now time.Time) bool {
	return e.ReleasedAt != 0 && settled(env, e.ReleasedAt, now)
}

// Status is the gateway's status as DescribeNatGateways answers it.
func (n *NatGateway) Status(env core.Env, now time.Time) string {
	if n.DeletedAt != 0 {
		return "Deleting"
	}
	return env.AsyncStatus(n.Created, now, "Creating", "Available")
}

// Status is the entry's status as DescribeSnatTableEntries answers it.
func (e *SnatEntry) Status(env core.Env, now time.Time) string {
	if e.DeletedAt != 0 {
		return "Deleting"
	}
	return env.AsyncStatus(e.Created, now, "Pending", "Available")
}

// Status is the address's status as DescribeEipAddresses answers it.
func (e *EIP) Status(env core.Env, now time.Time) string {
	switch {
	case e.ReleasedAt != 0:
		return "Releasing"
	case e.Instance != "" && !settled(env, e.AssocAt, now):
		return "Associating"
	case e.Instance != "":
		return "InUse"
	case e.UnassocAt != 0 && !settled(env, e.UnassocAt, now):
		return "Unassociating"
	}
	return "Available"
}

// LiveSnat lists a gateway's SNAT entries that have not finished deleting.
func (n *NatGateway) LiveSnat(env core.Env, now time.Time) []*SnatEntry {
	var out []*SnatEntry
	for _, e := range n.Snat {
		if !e.Gone(env, now) {
			out = append(out, e)
		}
	}
	return out
}

// purge drops the records whose deletion has settled. Called by the network products' write
// handlers (under the write lock) before they act.
func (s *Store) purge(env core.Env, now time.Time) {
	for id, n := range s.Nats {
		if n.Gone(env, now) {
			delete(s.Nats, id)
			continue
		}
		if live := n.LiveSnat(env, now); len(live) != len(n.Snat) {
			n.Snat = live
		}
	}
	for id, e := range s.EIPs {
		if e.Gone(env, now) {
			delete(s.EIPs, id)
		}
	}
}

// write wraps a write handler of these products so it sees no settled deletions.
func write(fn core.Handler) core.Handler {
	return func(c *core.Call) (any, *core.Error) {
		StoreIn(c.Stores).purge(c.Env, c.Now)
		return fn(c)
	}
}

// ForgetInstance is what the vendor does to EIPs when an ECS instance is released: the
// instance's EIP becomes Available again. The Server calls it from its release path while ECS
// is part of internal/emulator.
func (s *Store) ForgetInstance(id string) {
	for _, e := range s.EIPs {
		if e.Instance == id && e.InstanceType == EipTargetECS {
			e.Instance, e.InstanceType, e.AssocAt, e.UnassocAt = "", "", 0, 0
		}
	}
}

// natVpcDependency is DeleteVpc's check for the NAT gateways, made before any other product's:
// a NAT gateway (even one still Deleting) answers DependencyViolation.NatGateway as the vendor
// documents.
func natVpcDependency(c *core.Call, vpcID string) *core.Error {
	s := StoreIn(c.Stores)
	for _, id := range core.SortedKeys(s.Nats) {
		if n := s.Nats[id]; n.VpcID == vpcID && !n.Gone(c.Env, c.Now) {
			return core.Errf(400, "DependencyViolation.NatGateway", "Specified object has dependent resources NatGateway: VPC %s still has NAT gateway %s (%s); delete it first.", vpcID, n.ID, n.Status(c.Env, c.Now))
		}
	}
	return nil
}

// natVSwitchDependency is DeleteVSwitch's check for the NAT gateways: an enhanced NAT gateway in
// the vSwitch answers DependencyViolation.EnhancedNatgw, an SNAT entry whose source is the
// vSwitch DependencyViolation.SnatEntry.
func natVSwitchDependency(c *core.Call, vswID string) *core.Error {
	s := StoreIn(c.Stores)
	for _, id := range core.SortedKeys(s.Nats) {
		n := s.Nats[id]
		if n.Gone(c.Env, c.Now) {
			continue
		}
		if n.VSwitchID == vswID {
			return core.Errf(400, "DependencyViolation.EnhancedNatgw", "Specified object has dependent resources EnhancedNatgw: vSwitch %s holds NAT gateway %s; delete it first.", vswID, n.ID)
		}
		for _, e := range n.LiveSnat(c.Env, c.Now) {
			if e.SourceVSw == vswID {
				return core.Errf(400, "DependencyViolation.SnatEntry", "Specified object has dependent resources SnatEntry: vSwitch %s is the source of SNAT entry %s; delete it first.", vswID, e.ID)
			}
		}
	}
	return nil
}
