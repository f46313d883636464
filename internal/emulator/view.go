package emulator

import (
	"time"

	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// View is a read-only copy of what a node would see of its cloud: the running instances with
// their user data, and the network objects that decide what an instance can reach. The node
// agent (internal/emulator/nodeagent) reads it; nothing in it points back into the emulator's
// state, so the agent can take its time without holding the emulator's lock.
type View struct {
	Instances      []InstanceView          // live instances, in creation order
	VSwitches      map[string]VSwitchView  // by id
	SecurityGroups map[string]SecurityView // by id
	NatGateways    []NatGatewayView        // Available gateways, by id
	EIPs           []EIPView               // by id, not released
	LoadBalancers  []LoadBalancerView      // by id
	// Images are the custom images (CreateImage, CopyImage), in creation order, whatever their
	// status: an instance's ImageID names one when it runs from a custom image.
	Images []ImageView
	// Now is the emulator's clock when the view was taken (the wall clock moved by
	// POST /_emulator/clock): what a node's clock reads, so bootstrap tokens and kubeadm's
	// uploaded certificates expire by it (the node agent's tokens.go).
	Now time.Time
}

// ImageView is one custom image: its id, region and status (Creating, Available) and what it was
// made of. SourceUserData is the source instance's user data raw as stored, Base64 as
// RunInstances took it (InstanceView.UserData's form); SourceImageID is the image that instance
// ran from. A copy carries its source's and names it in CopiedFrom.
type ImageView = emuecs.ImageView

// InstanceView is one instance; Status is the one DescribeInstances answers (Running, ...).
type InstanceView = emuecs.InstanceView

// VSwitchView is one vSwitch.
type VSwitchView struct {
	ID, VpcID, CIDR string
}

// SecurityView is one security group; InnerAccessAccept is its InnerAccessPolicy "Accept".
type SecurityView = emuecs.SecurityView

// SecurityRuleView is one rule of a security group, as DescribeSecurityGroupAttribute spells it.
type SecurityRuleView = emuecs.SecurityRuleView

// NatGatewayView is one Available NAT gateway with its Available SNAT entries.
type NatGatewayView struct {
	ID, VpcID string
	Snat      []SnatEntryView
}

// SnatEntryView is one SNAT entry: a source vSwitch (SourceVSwitchID, its CIDR in SourceCIDR)
// or a CIDR block, translated to the comma-separated public addresses SnatIP.
type SnatEntryView struct {
	ID, SourceVSwitchID, SourceCIDR, SnatIP string
}

// EIPView is one elastic IP; InstanceID and InstanceType ("EcsInstance", "Nat") are set while
// it is InUse.
type EIPView struct {
	ID, IP, InstanceID, InstanceType string
}

// LoadBalancerView is one Classic Load Balancer with its TCP listeners and backend servers.
type LoadBalancerView struct {
	ID, VpcID, Address, AddressType string
	Listeners                       []ListenerView
	BackendIDs                      []string
}

// ListenerView is one listener (the emulator serves TCP listeners only).
type ListenerView struct {
	Protocol          string
	Port, BackendPort int
	Running           bool
}

// View copies the state a node agent needs, under the read lock. It costs nothing unless called.
func (s *Server) View() View {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.now()
	d := s.db
	v := View{VSwitches: map[string]VSwitchView{}, Now: now}
	v.Instances, v.SecurityGroups = emuecs.Views(s.adminCall(now))
	v.Images = emuecs.ImageViews(s.adminCall(now))
	for id, sw := range d.network().VSwitches {
		v.VSwitches[id] = VSwitchView{ID: sw.ID, VpcID: sw.VpcID, CIDR: sw.CIDR}
	}
	s.netView(now, &v)
	return v
}

// netView adds the NAT gateways, EIPs and load balancers that have settled. Caller holds s.mu.
func (s *Server) netView(now time.Time, v *View) {
	d, env := s.db, serverEnv{s}
	net := d.network()
	for _, id := range sortedKeys(net.Nats) {
		n := net.Nats[id]
		if n.Status(env, now) != "Available" {
			continue
		}
		nv := NatGatewayView{ID: n.ID, VpcID: n.VpcID}
		for _, e := range n.LiveSnat(env, now) {
			if e.Status(env, now) == "Available" {
				nv.Snat = append(nv.Snat, SnatEntryView{ID: e.ID, SourceVSwitchID: e.SourceVSw, SourceCIDR: e.SourceNet, SnatIP: e.SnatIP})
			}
		}
		v.NatGateways = append(v.NatGateways, nv)
	}
	for _, id := range sortedKeys(net.EIPs) {
		e := net.EIPs[id]
		if e.Gone(env, now) {
			continue
		}
		ev := EIPView{ID: e.ID, IP: e.IP}
		if e.Status(env, now) == "InUse" {
			ev.InstanceID, ev.InstanceType = e.Instance, e.InstanceType
		}
		v.EIPs = append(v.EIPs, ev)
	}
	for _, id := range sortedKeys(d.loadBalancers().LoadBalancers) {
		lb := d.loadBalancers().LoadBalancers[id]
		lv := LoadBalancerView{ID: lb.ID, VpcID: lb.VpcID, Address: lb.Address, AddressType: lb.AddressType}
		for _, l := range lb.Listeners {
			lv.Listeners = append(lv.Listeners, ListenerView{Protocol: "TCP", Port: l.Port, BackendPort: l.BackendPort, Running: l.Running})
		}
		for _, b := range lb.Backends {
			lv.BackendIDs = append(lv.BackendIDs, b.ServerID)
		}
		v.LoadBalancers = append(v.LoadBalancers, lv)
	}
}
