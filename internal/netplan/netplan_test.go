package netplan

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParseIPv4CIDR(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"10.0.0.0/16", "10.0.0.0/16", ""},
		{" 192.168.0.0/24 ", "192.168.0.0/24", ""},
		{"10.0.0.1/16", "", "host bits set; the block is 10.0.0.0/16"},
		{"fd00::/8", "", "not an IPv4 CIDR"},
		{"10.0.0.0", "", "not an IPv4 CIDR"},
		{"banana", "", "not an IPv4 CIDR"},
	}
	for _, tt := range tests {
		got, err := ParseIPv4CIDR(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseIPv4CIDR(%q) error = %v, want it to contain %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseIPv4CIDR(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestCheckVPCCIDR(t *testing.T) {
	tests := []struct {
		in  string
		err string
	}{
		{"10.0.0.0/8", ""},
		{"10.20.0.0/16", ""},
		{"172.16.0.0/12", ""},
		{"172.31.255.0/28", ""},
		{"192.168.0.0/16", ""},
		{"8.8.8.0/24", "not a private range"},
		{"172.32.0.0/16", "not a private range"},
		{"100.64.0.0/10", "not a private range"},
		{"0.0.0.0/0", "not a private range"},
		{"10.0.0.0/7", "not a private range"},
		{"10.0.0.0/29", "needs /8 to /28"},
	}
	for _, tt := range tests {
		err := CheckVPCCIDR(netip.MustParsePrefix(tt.in))
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("CheckVPCCIDR(%s) = %v, want error containing %q", tt.in, err, tt.err)
		}
	}
}

func TestCarve(t *testing.T) {
	tests := []struct {
		block string
		zones []string
		want  map[string]string
		err   string
	}{
		{"10.0.0.0/16", []string{"z-a"}, map[string]string{"z-a": "10.0.0.0/16"}, ""},
		{"10.0.0.0/16", []string{"z-b", "z-a"}, map[string]string{"z-a": "10.0.0.0/17", "z-b": "10.0.128.0/17"}, ""},
		{"10.0.0.0/16", []string{"z-a", "z-b", "z-c"}, map[string]string{"z-a": "10.0.0.0/18", "z-b": "10.0.64.0/18", "z-c": "10.0.128.0/18"}, ""},
		// Never larger than a /16, the largest vSwitch.
		{"10.0.0.0/8", []string{"z-a", "z-b", "z-c"}, map[string]string{"z-a": "10.0.0.0/16", "z-b": "10.1.0.0/16", "z-c": "10.2.0.0/16"}, ""},
		{"192.168.1.0/28", []string{"z-a", "z-b"}, map[string]string{"z-a": "192.168.1.0/29", "z-b": "192.168.1.8/29"}, ""},
		{"192.168.1.0/28", []string{"z-a", "z-b", "z-c"}, nil, "too small for 3 zones"},
		{"10.0.0.0/16", nil, nil, "no zones"},
	}
	for _, tt := range tests {
		got, err := Carve(netip.MustParsePrefix(tt.block), tt.zones)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Carve(%s, %v) error = %v, want %q", tt.block, tt.zones, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Carve(%s, %v): %v", tt.block, tt.zones, err)
			continue
		}
		gotS := map[string]string{}
		for k, v := range got {
			gotS[k] = v.String()
		}
		if !reflect.DeepEqual(gotS, tt.want) {
			t.Errorf("Carve(%s, %v) = %v, want %v", tt.block, tt.zones, gotS, tt.want)
		}
		// Every carved block is a valid, non-overlapping vSwitch block inside the VPC block.
		if p := CheckVSwitchCIDRs(netip.MustParsePrefix(tt.block), tt.zones, gotS); len(p) > 0 {
			t.Errorf("Carve(%s, %v) gave blocks that fail the check: %v", tt.block, tt.zones, p)
		}
	}
}

func TestCheckVSwitchCIDRs(t *testing.T) {
	block := netip.MustParsePrefix("10.0.0.0/16")
	zones := []string{"z-a", "z-b"}
	tests := []struct {
		name  string
		cidrs map[string]string
		want  []string // substrings, one per expected problem
	}{
		{"good", map[string]string{"z-a": "10.0.0.0/24", "z-b": "10.0.1.0/24"}, nil},
		{"overlap", map[string]string{"z-a": "10.0.0.0/23", "z-b": "10.0.1.0/24"}, []string{"overlaps 10.0.0.0/23"}},
		{"out of range", map[string]string{"z-a": "10.0.0.0/24", "z-b": "10.1.0.0/24"}, []string{"outside cidr_block"}},
		{"mask too wide", map[string]string{"z-a": "10.0.0.0/24", "z-b": "10.0.0.0/15"}, []string{"/15 mask"}},
		{"mask too narrow", map[string]string{"z-a": "10.0.0.0/24", "z-b": "10.0.1.0/30"}, []string{"/30 mask"}},
		{"missing zone", map[string]string{"z-a": "10.0.0.0/24"}, []string{"zone z-b has no block"}},
		{"unknown zone", map[string]string{"z-a": "10.0.0.0/24", "z-b": "10.0.1.0/24", "z-c": "10.0.2.0/24"}, []string{"not one of zone_ids"}},
		{"malformed", map[string]string{"z-a": "10.0.0.0/24", "z-b": "10.0.1.1/24"}, []string{"host bits"}},
	}
	for _, tt := range tests {
		got := CheckVSwitchCIDRs(block, zones, tt.cidrs)
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v, want %d problems", tt.name, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i].Message, w) {
				t.Errorf("%s: problem %d = %q, want it to contain %q", tt.name, i, got[i].Message, w)
			}
		}
	}
}

func TestZoneRegion(t *testing.T) {
	tests := map[string]string{
		"cn-wulanchabu-a": "cn-wulanchabu",
		"cn-hangzhou-h":   "cn-hangzhou",
		"ap-southeast-1a": "ap-southeast-1",
		"us-west-1b":      "us-west-1",
		"cn-wulanchabu":   "",
		"a":               "",
		"":                "",
		"cn-beijing-":     "",
		"CN-BEIJING-A":    "",
	}
	for in, want := range tests {
		if got := ZoneRegion(in); got != want {
			t.Errorf("ZoneRegion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDesiredRules(t *testing.T) {
	rules := DesiredRules("sg-1", []string{"203.0.113.0/24", "10.1.0.0/16", "203.0.113.0/24"})
	var accepts, drops int
	lastAccept, firstDrop := 0, 1000
	for i, r := range rules {
		switch r.Policy {
		case "accept":
			accepts++
			if r.Priority != AcceptPriority {
				t.Errorf("accept rule %+v has priority %d", r, r.Priority)
			}
			lastAccept = i
		case "drop":
			drops++
			if r.Priority <= AcceptPriority {
				t.Errorf("drop rule %+v must have a lower priority (higher number) than the accepts", r)
			}
			firstDrop = min(firstDrop, i)
		}
	}
	// 1 member rule + 2 per distinct admin CIDR; 3 private-range drops.
	if accepts != 5 || drops != 3 {
		t.Fatalf("got %d accepts and %d drops, want 5 and 3: %+v", accepts, drops, rules)
	}
	if lastAccept > firstDrop {
		t.Errorf("sorted rules put a drop before an accept: %+v", rules)
	}
	if got := AdminCIDRs(rules); !reflect.DeepEqual(got, []string{"10.1.0.0/16", "203.0.113.0/24"}) {
		t.Errorf("AdminCIDRs = %v", got)
	}
	self := rules[0]
	if !self.IsGroupSource() || self.Source != "sg-1" || self.Protocol != "ALL" || self.PortRange != "-1/-1" {
		t.Errorf("first rule should be the member rule, got %+v", self)
	}
}

func TestDiffRules(t *testing.T) {
	old := DesiredRules("sg-1", []string{"10.1.0.0/16"})
	next := DesiredRules("sg-1", []string{"10.2.0.0/16"})
	add, remove := DiffRules(next, old)
	if len(add) != 2 || len(remove) != 2 {
		t.Fatalf("add %v remove %v, want 2 and 2", add, remove)
	}
	for _, r := range add {
		if r.Source != "10.2.0.0/16" {
			t.Errorf("adds %+v", r)
		}
	}
	for _, r := range remove {
		if r.Source != "10.1.0.0/16" {
			t.Errorf("removes %+v", r)
		}
	}
	// Descriptions are not identity.
	changed := append([]Rule(nil), old...)
	changed[0].Description = "edited in the console"
	if a, r := DiffRules(old, changed); len(a)+len(r) != 0 {
		t.Errorf("a description change made a diff: %v %v", a, r)
	}
}

func TestPlacement(t *testing.T) {
	for _, p := range Placements {
		if p != PlacementNone && PlacementFromStrategy(Strategy(p)) != p {
			t.Errorf("placement %s does not survive the round trip through %q", p, Strategy(p))
		}
	}
	if GroupSize(PlacementNone) != 0 || GroupSize(PlacementLowLatency) != 20 {
		t.Errorf("group sizes wrong")
	}
	for n, want := range map[int]int{0: 0, 1: 1, 20: 1, 21: 2, 100: 5} {
		if got := GroupsFor(n); got != want {
			t.Errorf("GroupsFor(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestNCCLEnv(t *testing.T) {
	off := NCCLEnv(false)
	if !reflect.DeepEqual(off, map[string]string{"NCCL_IB_DISABLE": "1"}) {
		t.Errorf("NCCLEnv(false) = %v", off)
	}
	on := NCCLEnv(true)
	for k, v := range map[string]string{"NCCL_IB_DISABLE": "0", "NCCL_SOCKET_IFNAME": "eth0", "NCCL_IB_HCA": "erdma_0", "NCCL_IB_GID_INDEX": "1"} {
		if on[k] != v {
			t.Errorf("NCCLEnv(true)[%s] = %q, want %q", k, on[k], v)
		}
	}
	if _, ok := on["NCCL_NET_GDR_LEVEL"]; !ok {
		t.Errorf("NCCLEnv(true) lacks NCCL_NET_GDR_LEVEL")
	}
	if len(NCCLNames()) != len(on) {
		t.Errorf("NCCLNames %v does not cover %v", NCCLNames(), on)
	}
}
