package nodeagent

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/regionreach"
)

// network answers what an instance can reach, from one emulator View: a route to the internet,
// and a TCP port of another instance through the security groups, directly or through a load
// balancer.
type network struct {
	view     emulator.View
	byID     map[string]*emulator.InstanceView
	byVpcIP  map[string]*emulator.InstanceView // vpc id + "/" + private IP
	lbByAddr map[string]*emulator.LoadBalancerView
}

func newNetwork(v emulator.View) *network {
	n := &network{view: v, byID: map[string]*emulator.InstanceView{}, byVpcIP: map[string]*emulator.InstanceView{},
		lbByAddr: map[string]*emulator.LoadBalancerView{}}
	for i := range v.Instances {
		in := &v.Instances[i]
		n.byID[in.ID] = in
		n.byVpcIP[in.VpcID+"/"+in.PrivateIP] = in
	}
	for i := range v.LoadBalancers {
		n.lbByAddr[v.LoadBalancers[i].Address] = &v.LoadBalancers[i]
	}
	return n
}

// internetRoute names the instance's way out: its public IP, an EIP bound to it, or an SNAT entry
// of an Available NAT gateway in its VPC whose source is its vSwitch or a block holding its
// address. "" when it has none.
func (n *network) internetRoute(in *emulator.InstanceView) string {
	if in.PublicIP != "" {
		return "public IP " + in.PublicIP
	}
	for _, e := range n.view.EIPs {
		if e.InstanceID == in.ID && e.InstanceType == "EcsInstance" {
			return "EIP " + e.IP
		}
	}
	ip, err := netip.ParseAddr(in.PrivateIP)
	for _, g := range n.view.NatGateways {
		if g.VpcID != in.VpcID {
			continue
		}
		for _, s := range g.Snat {
			if s.SnatIP == "" {
				continue
			}
			if s.SourceVSwitchID == in.VSwitchID {
				return fmt.Sprintf("SNAT entry %s of NAT gateway %s", s.ID, g.ID)
			}
			if p, perr := netip.ParsePrefix(s.SourceCIDR); s.SourceVSwitchID == "" && perr == nil && err == nil && p.Contains(ip) {
				return fmt.Sprintf("SNAT entry %s (%s) of NAT gateway %s", s.ID, s.SourceCIDR, g.ID)
			}
		}
	}
	return ""
}

// NoRouteReason starts the reason of a node whose downloads need the internet it cannot reach;
// the words are the ones issue #18 asks for.
const NoRouteReason = "no route to the internet"

// checkDownloads returns "" when every download is reachable: from an endpoint of the
// instance's region on Alibaba Cloud's internal network (the in-VPC mirror, Container Registry's
// VPC endpoints, OSS's internal endpoint: internal/regionreach.InRegion), or anywhere through the
// instance's internet route.
func (n *network) checkDownloads(in *emulator.InstanceView, downloads []Download) string {
	var internet []string
	for _, d := range downloads {
		if d.Host == bootstrap.AlibabaVPCMirrorHost || regionreach.InRegion(in.Region, d.Host) {
			continue
		}
		what := d.Host
		if what == "" {
			what = d.What
		}
		if !slices.Contains(internet, what) {
			internet = append(internet, what)
		}
	}
	if len(internet) == 0 || n.internetRoute(in) != "" {
		return ""
	}
	return fmt.Sprintf("%s: vSwitch %s of VPC %s has no SNAT entry of an Available NAT gateway and the instance has no EIP or public IP, "+
		"but its bootstrap downloads from %s", NoRouteReason, in.VSwitchID, in.VpcID, strings.Join(internet, ", "))
}

// target is one instance and port a connection to an endpoint lands on.
type target struct {
	in   *emulator.InstanceView
	port int
}

// resolveEndpoint finds where a connection from in to endpoint (host:port, and " at addr" when
// the host is a name), whose host the node resolved to addr (resolveHost), lands: the backends of a load balancer in its VPC with a running
// TCP listener on the port, with that load balancer, or the instance with that private address.
// The string is the reason when it lands nowhere.
func (n *network) resolveEndpoint(in *emulator.InstanceView, endpoint, addr string) ([]target, *emulator.LoadBalancerView, string) {
	_, portText, ok := strings.Cut(endpoint, ":")
	portText, _, _ = strings.Cut(portText, " ") // "host:port at addr"
	port, err := strconv.Atoi(portText)
	if !ok || err != nil {
		return nil, nil, fmt.Sprintf("the API endpoint %q is not host:port", endpoint)
	}
	if lb := n.lbByAddr[addr]; lb != nil {
		if lb.VpcID != in.VpcID {
			return nil, nil, fmt.Sprintf("the API endpoint %s is load balancer %s, which is not in the node's VPC %s", endpoint, lb.ID, in.VpcID)
		}
		i := slices.IndexFunc(lb.Listeners, func(l emulator.ListenerView) bool { return l.Protocol == "TCP" && l.Port == port })
		if i < 0 {
			return nil, nil, fmt.Sprintf("load balancer %s (the API endpoint %s) has no TCP listener on port %d", lb.ID, endpoint, port)
		}
		l := lb.Listeners[i]
		if !l.Running {
			return nil, nil, fmt.Sprintf("the TCP listener %d of load balancer %s (the API endpoint %s) is stopped", port, lb.ID, endpoint)
		}
		var out []target
		for _, id := range lb.BackendIDs {
			if b := n.byID[id]; b != nil {
				out = append(out, target{b, l.BackendPort})
			}
		}
		if len(out) == 0 {
			return nil, nil, fmt.Sprintf("load balancer %s (the API endpoint %s) has no running backend server", lb.ID, endpoint)
		}
		return out, lb, ""
	}
	if b := n.byVpcIP[in.VpcID+"/"+addr]; b != nil {
		return []target{{b, port}}, nil, ""
	}
	return nil, nil, fmt.Sprintf("the API endpoint %s is neither a load balancer nor a running instance in the node's VPC %s", endpoint, in.VpcID)
}

// tcpAllowed reports whether the security groups let a TCP connection from src reach dst on
// port: src's egress rules (no matching rule: allowed) and dst's ingress rules (no matching
// rule: denied), or a group both share whose InnerAccessPolicy is Accept. The vendor's order:
// the lowest priority number wins, and drop wins a tie.
func (n *network) tcpAllowed(src, dst *emulator.InstanceView, port int) bool {
	for _, g := range dst.SecurityGroupIDs {
		if sg, ok := n.view.SecurityGroups[g]; ok && sg.InnerAccessAccept && slices.Contains(src.SecurityGroupIDs, g) {
			return true
		}
	}
	if verdict, matched := n.decide(src.SecurityGroupIDs, "egress", dst, port); matched && !verdict {
		return false
	}
	verdict, matched := n.decide(dst.SecurityGroupIDs, "ingress", src, port)
	return matched && verdict
}

// decide evaluates the rules of groups in one direction against the peer's address and groups.
func (n *network) decide(groups []string, direction string, peer *emulator.InstanceView, port int) (accept, matched bool) {
	best := 0
	for _, g := range groups {
		for _, r := range n.view.SecurityGroups[g].Rules {
			if r.Direction != direction || !ruleMatches(r, peer, port) {
				continue
			}
			drop := strings.EqualFold(r.Policy, "drop")
			switch {
			case !matched || r.Priority < best:
				best, accept, matched = r.Priority, !drop, true
			case r.Priority == best && drop:
				accept = false
			}
		}
	}
	return accept, matched
}

func ruleMatches(r emulator.SecurityRuleView, peer *emulator.InstanceView, port int) bool {
	if p := strings.ToUpper(r.Protocol); p != "TCP" && p != "ALL" {
		return false
	}
	if r.PortRange != "-1/-1" && r.PortRange != "" {
		from, to, _ := strings.Cut(r.PortRange, "/")
		lo, err1 := strconv.Atoi(from)
		hi, err2 := strconv.Atoi(to)
		if err1 != nil || err2 != nil || port < lo || port > hi {
			return false
		}
	}
	if r.GroupID != "" {
		return slices.Contains(peer.SecurityGroupIDs, r.GroupID)
	}
	prefix, err := netip.ParsePrefix(r.CIDR)
	addr, aerr := netip.ParseAddr(peer.PrivateIP)
	return err == nil && aerr == nil && prefix.Contains(addr)
}
