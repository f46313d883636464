package emulator

import (
	"sort"
	"time"
)

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
