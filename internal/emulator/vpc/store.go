// Package vpc is the emulator's VPC API (2016-04-28): VPCs and vSwitches, the network every other
// product places its records in, and NAT gateways with their SNAT entries and elastic IPs, with
// the one tag API that serves them all. It stands on package core only, so the products above it
// (NAS mount targets, SLB, ESS, and in time ECS) import it to find a VPC or a vSwitch; what it
// needs of them (an ECS instance an EIP binds to, what keeps DeleteVpc from deleting) they offer
// through hooks (RegisterDependent, UseInstances).
package vpc

import "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"

// storeName names the VPC records among the emulator's stores.
const storeName = "vpc"

func init() { core.RegisterStore(storeName, func() core.Store { return &Store{} }) }

// VPC is one VPC. Its status is derived from Created (see core.Env.AsyncStatus): Pending, then
// Available.
type VPC struct {
	ID         string     `json:"id"`
	Region     string     `json:"region"`
	Name       string     `json:"name,omitempty"`
	Desc       string     `json:"desc,omitempty"`
	CIDR       string     `json:"cidr"`
	VRouter    string     `json:"vrouter"`
	RouteTable string     `json:"route_table"`
	Created    int64      `json:"created"`
	Tags       []core.Tag `json:"tags,omitempty"`
}

// VSwitch is one vSwitch of a VPC, in one zone.
type VSwitch struct {
	ID      string     `json:"id"`
	Region  string     `json:"region"`
	VpcID   string     `json:"vpc"`
	Zone    string     `json:"zone"`
	CIDR    string     `json:"cidr"`
	Name    string     `json:"name,omitempty"`
	Desc    string     `json:"desc,omitempty"`
	Created int64      `json:"created"`
	NextIP  uint32     `json:"next_ip"` // offset of the next private address to hand out
	Tags    []core.Tag `json:"tags,omitempty"`
}

// Store is the VPC records. Its JSON keys ("vpcs", "vswitches", "nat_gateways", "eips") are the
// ones the state file had before VPC had its own package.
type Store struct {
	Vpcs      map[string]*VPC     `json:"vpcs"`
	VSwitches map[string]*VSwitch `json:"vswitches"`
	// NAT gateways (with their SNAT entries) and EIPs, records.go.
	Nats map[string]*NatGateway `json:"nat_gateways,omitempty"`
	EIPs map[string]*EIP        `json:"eips,omitempty"`
}

// Init makes the maps a state file without VPC keys left nil.
func (s *Store) Init() {
	if s.Vpcs == nil {
		s.Vpcs = map[string]*VPC{}
	}
	if s.VSwitches == nil {
		s.VSwitches = map[string]*VSwitch{}
	}
	if s.Nats == nil {
		s.Nats = map[string]*NatGateway{}
	}
	if s.EIPs == nil {
		s.EIPs = map[string]*EIP{}
	}
}

// StoreIn answers the VPC store of a Server's stores.
func StoreIn(s *core.Stores) *Store { return core.StoreOf[*Store](s, storeName) }

// VpcIn answers the VPC id in region, nil when there is none: a VPC of another region does not
// exist for a call made in this one.
func (s *Store) VpcIn(region, id string) *VPC {
	if v := s.Vpcs[id]; v != nil && v.Region == region {
		return v
	}
	return nil
}

// VSwitchIn answers the vSwitch id in region, nil when there is none.
func (s *Store) VSwitchIn(region, id string) *VSwitch {
	if sw := s.VSwitches[id]; sw != nil && sw.Region == region {
		return sw
	}
	return nil
}
