package netplan

import (
	"net/netip"
	"strings"
)

// The control plane endpoint (an internal load balancer in front of the API servers) owns a few
// ingress rules in its network's security group. They have their own priority, so their keys never
// equal a rule of the network's own set, and a description that names the load balancer, so the
// network leaves them alone and the endpoint finds exactly its own again.

// EndpointPriority is the priority of the endpoint's rules: below the network's accepts (no key
// collision), above its cross-segment drops (so they take effect).
const EndpointPriority = AcceptPriority + 1

// HealthCheckSource is the block the Classic Load Balancer's health checks come from, reserved by
// the vendor and never assigned to a user
// (https://help.aliyun.com/en/slb/classic-load-balancer/user-guide/health-check-overview/).
var HealthCheckSource = netip.MustParsePrefix("100.64.0.0/10")

const endpointRulePrefix = "gpucluster-endpoint "

// EndpointRuleDescription is the description of every rule the endpoint of load balancer lbID owns.
func EndpointRuleDescription(lbID string) string {
	return endpointRulePrefix + lbID + ": Kubernetes API through the control plane load balancer"
}

// EndpointRuleOwner is the load balancer id an endpoint rule belongs to, or "" when r is not an
// endpoint's rule.
func EndpointRuleOwner(r Rule) string {
	rest, ok := strings.CutPrefix(r.Description, endpointRulePrefix)
	if !ok || r.Priority != EndpointPriority {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// EndpointRules is what the endpoint of load balancer lbID needs, and no more: TCP 6443 from each
// of the network's vSwitch CIDRs (the workers, whose connections the layer-4 load balancer hands
// to the API servers with their own source address) and from the health-check block. Sorted.
func EndpointRules(lbID string, vswitchCIDRs []string) []Rule {
	desc := EndpointRuleDescription(lbID)
	seen := map[string]bool{}
	var rules []Rule
	for _, c := range append(append([]string{}, vswitchCIDRs...), HealthCheckSource.String()) {
		if seen[c] {
			continue
		}
		seen[c] = true
		rules = append(rules, Rule{Protocol: "TCP", PortRange: portRange(KubernetesPort), Source: c, Policy: "accept",
			Priority: EndpointPriority, Description: desc})
	}
	SortRules(rules)
	return rules
}
