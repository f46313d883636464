// Package netplan is the pure logic behind gpucluster_rdma_network: address plans (private-range
// checks, vSwitch carving, overlap checks), zone/region checks, the security group rule set, the
// placement figures and the NCCL environment. No I/O and no Terraform types.
package netplan

import (
	"fmt"
	"math/bits"
	"net/netip"
	"sort"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// PrivateRanges are the RFC 1918 blocks a VPC CIDR must lie in (and the blocks the "deny
// cross-segment" rules drop).
var PrivateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

// Mask bounds from the VPC API: a VPC is /8 to /28, a vSwitch /16 to /29.
const (
	VPCMinBits     = 8
	VPCMaxBits     = 28
	VSwitchMinBits = 16
	VSwitchMaxBits = 29
)

// cidrBlockAttr is the network attribute CIDR errors are about. ParseIPv4CIDR also parses
// admin_cidrs entries; that caller re-points the error with planerr.Error.At.
const cidrBlockAttr = "cidr_block"

// ParseIPv4CIDR parses an IPv4 CIDR block and refuses host bits, saying which block was meant.
func ParseIPv4CIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, planerr.New(cidrBlockAttr, s, "is not an IPv4 CIDR block", "write a block such as 10.0.0.0/16",
			fmt.Errorf("%q is not an IPv4 CIDR block such as 10.0.0.0/16", s))
	}
	if p.Masked() != p {
		return netip.Prefix{}, planerr.New(cidrBlockAttr, s, "has host bits set", "write "+p.Masked().String(),
			fmt.Errorf("%q has host bits set; the block is %s", s, p.Masked()))
	}
	return p, nil
}

// Contains reports whether inner lies wholly inside outer.
func Contains(outer, inner netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// IsPrivate reports whether p lies wholly inside one of PrivateRanges.
func IsPrivate(p netip.Prefix) bool {
	for _, r := range PrivateRanges {
		if Contains(r, p) {
			return true
		}
	}
	return false
}

// CheckVPCCIDR says why p cannot be a VPC's address block, or nil.
func CheckVPCCIDR(p netip.Prefix) error {
	if !IsPrivate(p) {
		return planerr.New(cidrBlockAttr, p.String(), "is not a private range",
			"use a block inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (for example 10.0.0.0/16)",
			fmt.Errorf("%s is not a private range: a VPC block must lie inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (for example 10.0.0.0/16)", p))
	}
	if p.Bits() < VPCMinBits || p.Bits() > VPCMaxBits {
		return planerr.New(cidrBlockAttr, p.String(), fmt.Sprintf("has a /%d mask", p.Bits()), fmt.Sprintf("use a mask from /%d to /%d", VPCMinBits, VPCMaxBits),
			fmt.Errorf("%s has a /%d mask; a VPC block needs /%d to /%d", p, p.Bits(), VPCMinBits, VPCMaxBits))
	}
	return nil
}

// Carve splits block into one vSwitch block per zone, all of the same size: the smallest power
// of two that holds every zone, but never larger than a /16 (the largest vSwitch). Zones get
// blocks in sorted order, so the same inputs always give the same plan.
func Carve(block netip.Prefix, zones []string) (map[string]netip.Prefix, error) {
	if len(zones) == 0 {
		return nil, planerr.New("zone_ids", "", "lists no zone", "give at least one zone",
			fmt.Errorf("no zones to carve %s for", block))
	}
	if !block.IsValid() || !block.Addr().Is4() {
		return nil, planerr.New(cidrBlockAttr, block.String(), "is not an IPv4 CIDR block", "write a block such as 10.0.0.0/16",
			fmt.Errorf("%s is not an IPv4 CIDR block such as 10.0.0.0/16", block))
	}
	sorted := append([]string(nil), zones...)
	sort.Strings(sorted)
	extra := bits.Len(uint(len(sorted) - 1)) // ceil(log2(n))
	size := max(block.Bits()+extra, VSwitchMinBits)
	if size > VSwitchMaxBits {
		return nil, planerr.New(cidrBlockAttr, block.String(),
			fmt.Sprintf("is too small for %d zones: each vSwitch would be /%d, and a vSwitch needs at least a /%d", len(sorted), size, VSwitchMaxBits),
			"give a larger cidr_block or set vswitch_cidrs",
			fmt.Errorf("%s is too small for %d zones: each vSwitch would be /%d, and a vSwitch needs at least a /%d; give a larger cidr_block or set vswitch_cidrs",
				block, len(sorted), size, VSwitchMaxBits))
	}
	out := make(map[string]netip.Prefix, len(sorted))
	step := uint32(1) << (32 - size)
	base := ipv4ToUint(block.Addr())
	for i, z := range sorted {
		out[z] = netip.PrefixFrom(uintToIPv4(base+uint32(i)*step), size)
	}
	return out, nil
}

func ipv4ToUint(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func uintToIPv4(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Problem is one thing wrong with a plan, tied to the key (zone) it concerns when there is one.
type Problem struct {
	Key     string
	Message string
}

// CheckVSwitchCIDRs checks user-given vSwitch blocks against the VPC block and the zones: one
// block per zone and no other keys, each a valid /16-/29 inside block, no two overlapping.
func CheckVSwitchCIDRs(block netip.Prefix, zones []string, cidrs map[string]string) []Problem {
	var problems []Problem
	want := map[string]bool{}
	for _, z := range zones {
		want[z] = true
	}
	keys := make([]string, 0, len(cidrs))
	for k := range cidrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, z := range zones {
		if _, ok := cidrs[z]; !ok {
			problems = append(problems, Problem{z, fmt.Sprintf("zone %s has no block: vswitch_cidrs needs one entry per zone in zone_ids", z)})
		}
	}
	parsed := map[string]netip.Prefix{}
	for _, k := range keys {
		if !want[k] {
			problems = append(problems, Problem{k, fmt.Sprintf("%s is not one of zone_ids; every key of vswitch_cidrs must be a zone of zone_ids", k)})
			continue
		}
		p, err := ParseIPv4CIDR(cidrs[k])
		if err != nil {
			problems = append(problems, Problem{k, err.Error()})
			continue
		}
		if p.Bits() < VSwitchMinBits || p.Bits() > VSwitchMaxBits {
			problems = append(problems, Problem{k, fmt.Sprintf("%s has a /%d mask; a vSwitch needs /%d to /%d", p, p.Bits(), VSwitchMinBits, VSwitchMaxBits)})
			continue
		}
		if !Contains(block, p) {
			problems = append(problems, Problem{k, fmt.Sprintf("%s is outside cidr_block %s; each vSwitch block must lie inside it", p, block)})
			continue
		}
		parsed[k] = p
	}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			pa, okA := parsed[a]
			pb, okB := parsed[b]
			if okA && okB && pa.Overlaps(pb) {
				problems = append(problems, Problem{b, fmt.Sprintf("%s (zone %s) overlaps %s (zone %s); vSwitch blocks must not overlap", pb, b, pa, a)})
			}
		}
	}
	return problems
}

// IsWorld reports whether p opens to every IPv4 address.
func IsWorld(p netip.Prefix) bool { return p.Bits() == 0 }

// ZoneRegion returns the region a zone id belongs to: "cn-wulanchabu-a" -> "cn-wulanchabu",
// "ap-southeast-1a" -> "ap-southeast-1". It returns "" for something that is not a zone id.
func ZoneRegion(zone string) string {
	i := len(zone)
	for i > 0 && zone[i-1] >= 'a' && zone[i-1] <= 'z' {
		i--
	}
	if i == len(zone) || i == 0 || len(zone)-i > 1 {
		return ""
	}
	region := strings.TrimSuffix(zone[:i], "-")
	if !strings.Contains(region, "-") {
		return ""
	}
	return region
}
