package emulator

import (
	"sort"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// What the VPC API (package vpc) needs of ECS, offered from here while ECS is part of this
// package: ECS stands on VPC, so VPC cannot import it. When ECS has its own package, these
// registrations move into its init unchanged.
func init() {
	// An EIP binds to an instance; DescribeVSwitches counts the addresses instances take.
	emuvpc.UseInstances(emuvpc.Instances{
		Find: func(c *core.Call, id string) (emuvpc.Instance, bool) {
			s := serverOf(c)
			in := s.db.Instances[id]
			if in == nil {
				return emuvpc.Instance{}, false
			}
			return emuvpc.Instance{Region: in.Region, VpcID: in.VpcID, IP: in.IP, Status: s.instanceStatus(in, c.Now)}, true
		},
		InVSwitch: func(c *core.Call, vswID string) int { return len(serverOf(c).db.byVSwitch[vswID]) },
	})
	// Instances hold their VPC and vSwitch: the vendor names DependencyViolation.Instance
	// first (instances hold the vSwitches and groups too), the security groups after the
	// VPC's vSwitches.
	emuvpc.RegisterDependent(emuvpc.Dependent{Rank: emuvpc.RankInstances,
		Vpc: func(c *core.Call, vpcID string) *core.Error {
			for _, in := range serverOf(c).db.order {
				if in.VpcID == vpcID {
					return errf(400, "DependencyViolation.Instance", "VPC %s still has instance %s; release it first.", vpcID, in.ID)
				}
			}
			return nil
		},
		VSwitch: func(c *core.Call, vswID string) *core.Error {
			if n := len(serverOf(c).db.byVSwitch[vswID]); n > 0 {
				return errDependency("vSwitch %s still has %d instance(s); delete them first.", vswID, n)
			}
			return nil
		},
	})
	emuvpc.RegisterDependent(emuvpc.Dependent{Rank: emuvpc.RankSecurityGroups,
		Vpc: func(c *core.Call, vpcID string) *core.Error {
			d := serverOf(c).db
			for _, id := range sortedKeys(d.SGs) {
				if g := d.SGs[id]; g.VpcID == vpcID {
					return errf(400, "DependencyViolation.SecurityGroup", "VPC %s still has security group %s; delete it first.", vpcID, g.ID)
				}
			}
			return nil
		},
	})
}

// serverOf is the Server a product package's call runs in: the dispatcher builds every
// core.Call with serverEnv (call.Core), so ECS, still in this package, finds its records there.
// A call built elsewhere (a product test's producttest.World) never reaches these hooks: that
// test binary does not link this package.
func serverOf(c *core.Call) *Server { return c.Env.(serverEnv).s }

// forgetInstanceInNet is what the vendor does to the network products when an ECS instance is
// released: the instance leaves every load balancer's backend list and its EIP becomes
// Available again.
func (d *db) forgetInstanceInNet(id string) {
	d.loadBalancers().ForgetInstance(id)
	d.network().ForgetInstance(id)
}

// netResources adds the NAT gateways, SNAT entries, EIPs and load balancers to the admin
// listing. Caller holds s.mu.
func (s *Server) netResources(now time.Time, r *Resources) {
	d, env := s.db, serverEnv{s}
	net := d.network()
	for _, id := range sortedKeys(net.Nats) {
		n := net.Nats[id]
		if n.Gone(env, now) {
			continue
		}
		r.NatGateways = append(r.NatGateways, map[string]any{"id": n.ID, "region": n.Region, "vpc_id": n.VpcID,
			"vswitch_id": n.VSwitchID, "name": n.Name, "status": n.Status(env, now), "snat_table_id": n.SnatTable,
			"tags": tagMap(n.Tags)})
		for _, e := range n.LiveSnat(env, now) {
			r.SnatEntries = append(r.SnatEntries, map[string]any{"id": e.ID, "region": n.Region, "nat_gateway_id": n.ID,
				"snat_table_id": n.SnatTable, "source_vswitch_id": e.SourceVSw, "source_cidr": e.SourceNet,
				"snat_ip": e.SnatIP, "status": e.Status(env, now)})
		}
	}
	sort.Slice(r.SnatEntries, func(i, j int) bool { return r.SnatEntries[i]["id"].(string) < r.SnatEntries[j]["id"].(string) })
	for _, id := range sortedKeys(net.EIPs) {
		e := net.EIPs[id]
		if e.Gone(env, now) {
			continue
		}
		r.EIPs = append(r.EIPs, map[string]any{"id": e.ID, "region": e.Region, "ip_address": e.IP,
			"bandwidth": e.Bandwidth, "internet_charge_type": e.NetCharge, "status": e.Status(env, now),
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
