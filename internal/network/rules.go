package network

import (
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
)

// RuleFromCloud turns an API rule into a netplan.Rule.
func RuleFromCloud(p cloud.IngressRule) netplan.Rule {
	src := p.SourceCIDR
	switch {
	case p.SourceGroupID != "":
		src = p.SourceGroupID
	case p.SourcePrefixListID != "":
		src = p.SourcePrefixListID
	case p.SourceIPv6CIDR != "":
		src = p.SourceIPv6CIDR
	}
	return netplan.Rule{Protocol: strings.ToUpper(p.Protocol), PortRange: p.PortRange, Source: src,
		Policy: strings.ToLower(p.Policy), Priority: p.Priority, Description: p.Description}
}

// RuleToCloud is the API rule that authorises r.
func RuleToCloud(r netplan.Rule) cloud.IngressRule {
	out := cloud.IngressRule{Protocol: r.Protocol, PortRange: r.PortRange, Policy: r.Policy, Priority: r.Priority, Description: r.Description}
	if r.IsGroupSource() {
		out.SourceGroupID = r.Source
	} else {
		out.SourceCIDR = r.Source
	}
	return out
}
