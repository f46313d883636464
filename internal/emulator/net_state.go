package emulator

import (
	"sort"
	"time"
)

// Records of the network products added for cluster egress and the control
// plane's load balancer: NAT gateways with their SNAT entries and elastic IPs
// (VPC API, 2016-04-28); the Classic Load Balancers are package slb's.
// Like the other records they hold only what the APIs return; the answers are
// built into the SDK's structs by vpc_nat.go, vpc_snat.go, vpc_eip.go.
//
// Asynchronous states are derived from timestamps (half of Config.BootTime per
// transition, as for VPCs), so nothing has to tick them along: a NAT gateway is
// Creating then Available, and Deleting until it is gone; an EIP is
// Associating then InUse, Unassociating then Available, Releasing until gone;
// an SNAT entry is Pending then Available, Deleting until gone. Records whose
// deletion has settled are invisible everywhere and purged by the next write.

type natGateway struct {
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
	Tags         []tag        `json:"tags,omitempty"`
	Snat         []*snatEntry `json:"snat,omitempty"`
}

type snatEntry struct {
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
	eipTargetNat = "Nat"
	eipTargetECS = "EcsInstance"
)

type eipRec struct {
	ID           string `json:"id"`
	Region       string `json:"region"`
	IP           string `json:"ip"`
	Name         string `json:"name,omitempty"`
	Desc         string `json:"desc,omitempty"`
	Bandwidth    int    `json:"bw"`     // Mbit/s
	NetCharge    string `json:"charge"` // InternetChargeType: PayByBandwidth or PayByTraffic
	InstCharge   string `json:"inst_charge"`
	ISP          string `json:"isp"`
	Created      int64  `json:"created"`
	Instance     string `json:"instance,omitempty"` // bound to this NAT gateway or ECS instance
	InstanceType string `json:"instance_type,omitempty"`
	AssocAt      int64  `json:"assoc_at,omitempty"`
	UnassocAt    int64  `json:"unassoc_at,omitempty"`
	ReleasedAt   int64  `json:"released,omitempty"`
	Tags         []tag  `json:"tags,omitempty"`
}

// initNetMaps gives a new or loaded db the maps of this file's records.
func (d *db) initNetMaps() {
	if d.Nats == nil {
		d.Nats = map[string]*natGateway{}
	}
	if d.EIPs == nil {
		d.EIPs = map[string]*eipRec{}
	}
}

// settled reports whether a transition started at (unix nanoseconds) is over.
func (s *Server) settled(at int64, now time.Time) bool {
	return time.Duration(now.UnixNano()-at) >= s.cfg.BootTime/2
}

func (s *Server) natGone(n *natGateway, now time.Time) bool {
	return n.DeletedAt != 0 && s.settled(n.DeletedAt, now)
}

func (s *Server) snatGone(e *snatEntry, now time.Time) bool {
	return e.DeletedAt != 0 && s.settled(e.DeletedAt, now)
}

func (s *Server) eipGone(e *eipRec, now time.Time) bool {
	return e.ReleasedAt != 0 && s.settled(e.ReleasedAt, now)
}

func (s *Server) natStatus(n *natGateway, now time.Time) string {
	if n.DeletedAt != 0 {
		return "Deleting"
	}
	return s.asyncStatus(n.Created, now, "Creating", "Available")
}

func (s *Server) snatStatus(e *snatEntry, now time.Time) string {
	if e.DeletedAt != 0 {
		return "Deleting"
	}
	return s.asyncStatus(e.Created, now, "Pending", "Available")
}

func (s *Server) eipStatus(e *eipRec, now time.Time) string {
	switch {
	case e.ReleasedAt != 0:
		return "Releasing"
	case e.Instance != "" && !s.settled(e.AssocAt, now):
		return "Associating"
	case e.Instance != "":
		return "InUse"
	case e.UnassocAt != 0 && !s.settled(e.UnassocAt, now):
		return "Unassociating"
	}
	return "Available"
}

// liveSnat lists a gateway's SNAT entries that have not finished deleting.
func (s *Server) liveSnat(n *natGateway, now time.Time) []*snatEntry {
	var out []*snatEntry
	for _, e := range n.Snat {
		if !s.snatGone(e, now) {
			out = append(out, e)
		}
	}
	return out
}

// purgeNet drops the records whose deletion has settled. Called by the
// network products' write handlers (under the write lock) before they act.
func (s *Server) purgeNet(now time.Time) {
	d := s.db
	for id, n := range d.Nats {
		if s.natGone(n, now) {
			delete(d.Nats, id)
			continue
		}
		if live := s.liveSnat(n, now); len(live) != len(n.Snat) {
			n.Snat = live
		}
	}
	for id, e := range d.EIPs {
		if s.eipGone(e, now) {
			delete(d.EIPs, id)
		}
	}
}

// netWrite wraps a write handler of these products so it sees no settled deletions.
func netWrite(fn handlerFunc) handlerFunc {
	return func(c *call) (any, *apiError) {
		c.s.purgeNet(c.now)
		return fn(c)
	}
}

// forgetInstanceInNet is what the vendor does to the network products when
// an ECS instance is released: the instance leaves every load balancer's
// backend list and its EIP becomes Available again.
func (d *db) forgetInstanceInNet(id string) {
	d.loadBalancers().ForgetInstance(id)
	for _, e := range d.EIPs {
		if e.Instance == id && e.InstanceType == eipTargetECS {
			e.Instance, e.InstanceType, e.AssocAt, e.UnassocAt = "", "", 0, 0
		}
	}
}

// netVpcDependency is DeleteVpc's check for this file's records: a NAT
// gateway (even one still Deleting) answers DependencyViolation.NatGateway as
// the vendor documents; a load balancer answers DependencyViolation (the
// vendor's DeleteVpc documents no SLB-specific code).
func (c *call) netVpcDependency(vpcID string) *apiError {
	for _, id := range sortedKeys(c.s.db.Nats) {
		if n := c.s.db.Nats[id]; n.VpcID == vpcID && !c.s.natGone(n, c.now) {
			return errf(400, "DependencyViolation.NatGateway", "Specified object has dependent resources NatGateway: VPC %s still has NAT gateway %s (%s); delete it first.", vpcID, n.ID, c.s.natStatus(n, c.now))
		}
	}
	return c.s.db.loadBalancers().VpcDependency(vpcID)
}

// netVSwitchDependency is DeleteVSwitch's check: an enhanced NAT gateway in
// the vSwitch answers DependencyViolation.EnhancedNatgw, an SNAT entry whose
// source is the vSwitch DependencyViolation.SnatEntry, a load balancer
// DependencyViolation.
func (c *call) netVSwitchDependency(vswID string) *apiError {
	d := c.s.db
	for _, id := range sortedKeys(d.Nats) {
		n := d.Nats[id]
		if c.s.natGone(n, c.now) {
			continue
		}
		if n.VSwitchID == vswID {
			return errf(400, "DependencyViolation.EnhancedNatgw", "Specified object has dependent resources EnhancedNatgw: vSwitch %s holds NAT gateway %s; delete it first.", vswID, n.ID)
		}
		for _, e := range c.s.liveSnat(n, c.now) {
			if e.SourceVSw == vswID {
				return errf(400, "DependencyViolation.SnatEntry", "Specified object has dependent resources SnatEntry: vSwitch %s is the source of SNAT entry %s; delete it first.", vswID, e.ID)
			}
		}
	}
	return d.loadBalancers().VSwitchDependency(vswID)
}

// netResources adds this file's records to the admin listing. Caller holds s.mu.
func (s *Server) netResources(now time.Time, r *Resources) {
	d := s.db
	for _, id := range sortedKeys(d.Nats) {
		n := d.Nats[id]
		if s.natGone(n, now) {
			continue
		}
		r.NatGateways = append(r.NatGateways, map[string]any{"id": n.ID, "region": n.Region, "vpc_id": n.VpcID,
			"vswitch_id": n.VSwitchID, "name": n.Name, "status": s.natStatus(n, now), "snat_table_id": n.SnatTable,
			"tags": tagMap(n.Tags)})
		for _, e := range s.liveSnat(n, now) {
			r.SnatEntries = append(r.SnatEntries, map[string]any{"id": e.ID, "region": n.Region, "nat_gateway_id": n.ID,
				"snat_table_id": n.SnatTable, "source_vswitch_id": e.SourceVSw, "source_cidr": e.SourceNet,
				"snat_ip": e.SnatIP, "status": s.snatStatus(e, now)})
		}
	}
	sort.Slice(r.SnatEntries, func(i, j int) bool { return r.SnatEntries[i]["id"].(string) < r.SnatEntries[j]["id"].(string) })
	for _, id := range sortedKeys(d.EIPs) {
		e := d.EIPs[id]
		if s.eipGone(e, now) {
			continue
		}
		r.EIPs = append(r.EIPs, map[string]any{"id": e.ID, "region": e.Region, "ip_address": e.IP,
			"bandwidth": e.Bandwidth, "internet_charge_type": e.NetCharge, "status": s.eipStatus(e, now),
			"instance_id": e.Instance, "instance_type": e.InstanceType, "tags": tagMap(e.Tags)})
	}
	for _, id := range sortedKeys(d.loadBalancers().LoadBalancers) {
		lb := d.loadBalancers().LoadBalancers[id]
		ports := make([]int, 0, len(lb.Listeners))
		for _, l := range lb.Listeners {
			ports = append(ports, l.Port)
		}
		backends := make([]string, 0, len(lb.Backends))
		for _, b := range lb.Backends {
			backends = append(backends, b.ServerID)
		}
		r.LoadBalancers = append(r.LoadBalancers, map[string]any{"id": lb.ID, "region": lb.Region, "name": lb.Name,
			"address": lb.Address, "address_type": lb.AddressType, "vpc_id": lb.VpcID, "vswitch_id": lb.VSwitchID,
			"listener_ports": ports, "backend_server_ids": backends, "tags": tagMap(lb.Tags)})
	}
}
