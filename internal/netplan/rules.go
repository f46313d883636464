package netplan

import (
	"fmt"
	"sort"
	"strconv"
)

// Rule is one ingress rule of the cluster's security group, as the API spells its fields.
type Rule struct {
	Protocol  string // TCP, UDP, ICMP, GRE, ALL
	PortRange string // "22/22", or "-1/-1" for ALL
	Source    string // a CIDR block, or a security group id (sg-...)
	Policy    string // accept | drop
	Priority  int    // 1-100, lower wins, drop wins ties
	// Description is informative only: it is not part of a rule's identity.
	Description string
}

// Priorities of the rule set: every accept beats every drop.
const (
	AcceptPriority = 1
	DenyPriority   = 100
)

// Ports the admin CIDRs may reach.
const (
	SSHPort        = 22
	KubernetesPort = 6443
)

// Key identifies a rule the way the API does: two rules with the same key are the same rule.
func (r Rule) Key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%03d", r.Policy, r.Protocol, r.PortRange, r.Source, r.Priority)
}

// IsGroupSource reports whether the source is a security group rather than a CIDR block.
func (r Rule) IsGroupSource() bool { return len(r.Source) > 3 && r.Source[:3] == "sg-" }

// DesiredRules is the rule set of a network's security group:
//   - everything between members (NCCL, MPI, eRDMA): ALL from the group itself, accept;
//   - SSH (22) and the Kubernetes API (6443) from each admin CIDR, accept;
//   - "deny cross-segment": ALL from each private range, drop, at a lower priority than the
//     accepts, so the VPC's other segments cannot reach members while admins and members can.
//
// The result is sorted (see SortRules).
func DesiredRules(groupID string, adminCIDRs []string) []Rule {
	rules := []Rule{{Protocol: "ALL", PortRange: "-1/-1", Source: groupID, Policy: "accept", Priority: AcceptPriority,
		Description: "gpucluster: all traffic between cluster members (NCCL, MPI, eRDMA)"}}
	seen := map[string]bool{}
	for _, c := range adminCIDRs {
		if seen[c] {
			continue
		}
		seen[c] = true
		rules = append(rules,
			Rule{Protocol: "TCP", PortRange: portRange(SSHPort), Source: c, Policy: "accept", Priority: AcceptPriority,
				Description: "gpucluster: SSH from admin_cidrs"},
			Rule{Protocol: "TCP", PortRange: portRange(KubernetesPort), Source: c, Policy: "accept", Priority: AcceptPriority,
				Description: "gpucluster: Kubernetes API from admin_cidrs"})
	}
	for _, p := range PrivateRanges {
		rules = append(rules, Rule{Protocol: "ALL", PortRange: "-1/-1", Source: p.String(), Policy: "drop", Priority: DenyPriority,
			Description: "gpucluster: deny cross-segment access"})
	}
	SortRules(rules)
	return rules
}

func portRange(p int) string { return strconv.Itoa(p) + "/" + strconv.Itoa(p) }

// AdminCIDRs reads the admin CIDRs back from a rule set: the sources of accepted TCP 22 or 6443
// rules, sorted.
func AdminCIDRs(rules []Rule) []string {
	set := map[string]bool{}
	for _, r := range rules {
		if r.Policy == "accept" && r.Protocol == "TCP" && !r.IsGroupSource() &&
			(r.PortRange == portRange(SSHPort) || r.PortRange == portRange(KubernetesPort)) {
			set[r.Source] = true
		}
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// SortRules orders rules by priority, then policy, protocol, port range and source.
func SortRules(rules []Rule) {
	sort.SliceStable(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.Key() < b.Key()
	})
}

// DiffRules returns the rules of desired missing from actual (to authorise) and the rules of
// actual not in desired (to revoke). Callers authorise first and revoke second, so access that
// stays in the set is never interrupted.
func DiffRules(desired, actual []Rule) (add, remove []Rule) {
	have := map[string]bool{}
	for _, r := range actual {
		have[r.Key()] = true
	}
	want := map[string]bool{}
	for _, r := range desired {
		want[r.Key()] = true
		if !have[r.Key()] {
			add = append(add, r)
		}
	}
	for _, r := range actual {
		if !want[r.Key()] {
			remove = append(remove, r)
		}
	}
	return add, remove
}
