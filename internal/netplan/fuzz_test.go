package netplan

import (
	"net/netip"
	"strings"
	"testing"
)

// Fuzz targets for the address plan: what a user writes in cidr_block and vswitch_cidrs goes
// through these functions at plan time, so none of them may panic, and what they accept must
// hold together. Seeds live in testdata/fuzz/<Target>/.

// FuzzParseIPv4CIDR: an accepted block is IPv4, has no host bits, and prints back to a string
// that parses to the same block; a refused one says what was wrong with the input.
func FuzzParseIPv4CIDR(f *testing.F) {
	for _, s := range []string{"10.0.0.0/16", " 10.0.0.0/16 ", "10.0.0.1/16", "::/0", "::ffff:10.0.0.0/104", "10.0.0.0/33", "10.0.0.0", "0.0.0.0/0", "010.0.0.0/8", "10.0.0.0/-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseIPv4CIDR(s)
		if err != nil {
			if !strings.Contains(err.Error(), "CIDR") && !strings.Contains(err.Error(), "host bits") {
				t.Fatalf("ParseIPv4CIDR(%q): error %q says neither what a CIDR block looks like nor which block was meant", s, err)
			}
			return
		}
		if !p.IsValid() || !p.Addr().Is4() || p.Masked() != p {
			t.Fatalf("ParseIPv4CIDR(%q) = %v: not a masked IPv4 block", s, p)
		}
		again, err := ParseIPv4CIDR(p.String())
		if err != nil || again != p {
			t.Fatalf("ParseIPv4CIDR(%q) = %v, which does not parse back (%v, %v)", s, p, again, err)
		}
		_ = CheckVPCCIDR(p)
		_ = IsPrivate(p)
	})
}

// FuzzCarve: any prefix with any zone list either carves, or says why not. A carve gives every
// zone one block, all inside the VPC block, of vSwitch size, none overlapping, and the result
// passes CheckVSwitchCIDRs as if the user had written it.
func FuzzCarve(f *testing.F) {
	f.Add("10.0.0.0/16", "cn-wulanchabu-a,cn-wulanchabu-b,cn-wulanchabu-c")
	f.Add("10.0.0.0/8", "a")
	f.Add("192.168.0.0/28", "a,b")
	f.Add("172.16.0.0/12", "a,a,b")
	f.Add("10.0.0.0/27", "a,b,c,d,e")
	f.Add("", "a")
	f.Add("10.0.0.0/16", "")
	f.Fuzz(func(t *testing.T, cidr, zoneList string) {
		block, err := netip.ParsePrefix(cidr)
		if err != nil {
			return
		}
		block = block.Masked()
		var zones []string
		if zoneList != "" {
			zones = strings.Split(zoneList, ",")
		}
		if len(zones) > 4096 {
			return
		}
		carved, err := Carve(block, zones)
		if err != nil {
			return
		}
		if !block.Addr().Is4() {
			t.Fatalf("Carve(%v) carved a block that is not IPv4", block)
		}
		cidrs := map[string]string{}
		for _, z := range zones {
			p, ok := carved[z]
			if !ok {
				t.Fatalf("Carve(%v, %q): zone %q has no block", block, zones, z)
			}
			if !Contains(block, p) || p.Bits() < VSwitchMinBits || p.Bits() > VSwitchMaxBits || p.Masked() != p {
				t.Fatalf("Carve(%v, %q): %s for %q is outside the block or not a vSwitch block", block, zones, p, z)
			}
			cidrs[z] = p.String()
		}
		if len(carved) != len(cidrs) {
			t.Fatalf("Carve(%v, %q) gave %d blocks for %d distinct zones", block, zones, len(carved), len(cidrs))
		}
		if problems := CheckVSwitchCIDRs(block, zones, cidrs); len(problems) != 0 {
			t.Fatalf("Carve(%v, %q) = %v, which CheckVSwitchCIDRs refuses: %v", block, zones, cidrs, problems)
		}
	})
}

// FuzzCheckVSwitchCIDRs: user-written blocks for two zones. Nothing panics; every problem is
// tied to a key and says something; and when no problem is reported, both blocks parse, lie
// inside the VPC block and do not overlap.
func FuzzCheckVSwitchCIDRs(f *testing.F) {
	f.Add("10.0.0.0/16", "10.0.0.0/20", "10.0.8.0/24")
	f.Add("10.0.0.0/16", "10.0.0.0/24", "10.1.0.0/24")
	f.Add("10.0.0.0/16", "10.0.0.0/24", "10.0.1.0/24")
	f.Add("10.0.0.0/16", "10.0.0.1/24", "not a cidr")
	f.Add("fd00::/8", "fd00::/16", "10.0.0.0/16")
	f.Add("10.0.0.0/8", "10.0.0.0/30", "10.0.0.0/15")
	f.Fuzz(func(t *testing.T, vpc, a, b string) {
		block, err := netip.ParsePrefix(vpc)
		if err != nil {
			return
		}
		zones := []string{"z-a", "z-b"}
		problems := CheckVSwitchCIDRs(block, zones, map[string]string{"z-a": a, "z-b": b})
		for _, p := range problems {
			if p.Key == "" || p.Message == "" {
				t.Fatalf("CheckVSwitchCIDRs(%v, %q, %q): a problem without key or message: %+v", block, a, b, p)
			}
		}
		if len(problems) > 0 {
			return
		}
		pa, errA := ParseIPv4CIDR(a)
		pb, errB := ParseIPv4CIDR(b)
		if errA != nil || errB != nil {
			t.Fatalf("CheckVSwitchCIDRs(%v, %q, %q) passed blocks that do not parse: %v, %v", block, a, b, errA, errB)
		}
		if !Contains(block, pa) || !Contains(block, pb) || pa.Overlaps(pb) {
			t.Fatalf("CheckVSwitchCIDRs(%v, %q, %q) passed blocks outside the VPC or overlapping", block, a, b)
		}
	})
}
