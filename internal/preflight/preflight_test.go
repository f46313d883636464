package preflight

import (
	"strings"
	"testing"
	"time"
)

const (
	zoneA = "cn-wulanchabu-a"
	zoneB = "cn-wulanchabu-b"
	zoneC = "cn-wulanchabu-c"
	gpu8  = "ecs.gn7e-c16g1.32xlarge" // 128 vCPUs, 8 GPUs
)

// fitting is a stack of 20 GPU nodes over two zones and an account that holds it.
func fitting() (Stack, Account) {
	s := Stack{
		Pools: []Pool{{
			Path: "pools[0]", InstanceType: gpu8, VCPUs: 128, GPUs: 8, Count: 20,
			Zones:     []string{zoneA, zoneB},
			VSwitches: map[string]VSwitch{zoneA: {"vsw-a", "10.0.0.0/28"}, zoneB: {"vsw-b", "10.0.1.0/24"}},
		}},
		ScalingGroups: []ScalingGroup{{Path: "autoscale[0]", InstanceType: gpu8, VCPUs: 128, GPUs: 8, MaxSize: 4, Spot: true}},
		LoadBalancers: 1, EIPs: 1, NATGateways: 1, Backends: 3,
	}
	a := Account{
		PostpaidVCPUs: Quota{Max: 4000, Used: 100}, SpotVCPUs: Quota{Max: 1000}, GPUs: Quota{Max: 400, Used: 8},
		Stock: map[string]map[string]string{
			zoneA: {gpu8: Available}, zoneB: {gpu8: Available}, zoneC: {gpu8: Available},
		},
		FreeAddresses: map[string]int{"vsw-a": 11, "vsw-b": 250},
		EIPs:          Quota{Max: 20, Used: 2}, NATGateways: Quota{Max: 5}, LoadBalancers: Quota{Max: 60}, ScalingGroups: Quota{Max: 100},
		ScalingGroupMaxSize: 2000, VPCInstances: Quota{Max: VPCInstanceCapacity, Used: 100},
	}
	return s, a
}

func TestFits(t *testing.T) {
	s, a := fitting()
	r := Check(s, a, 20)
	if !r.Fits() {
		t.Fatalf("shortfalls: %v", r.Shortfalls)
	}
	for _, want := range []string{"fits: ", "2560 of 3900 vCPUs left under max-postpaid-instance-vcpu-count", "512 of 1000 vCPUs left under max-spot",
		"192 of 392 GPUs", "24 of 14900 instances left under the VPC's instance capacity", "20 nodes placed"} {
		if !strings.Contains(r.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, r.Summary)
		}
	}
}

// Each case breaks one thing of the fitting stack and wants the one shortfall it causes, pinned
// to its attribute, with the need, what is available and the fix in its message.
func TestShortfalls(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(*Stack, *Account)
		path   string
		want   []string
	}{
		{"pay-as-you-go vCPUs", func(s *Stack, a *Account) { a.PostpaidVCPUs.Max = 2000 }, "pools[0].size",
			[]string{"needs 2560 vCPUs", "1900 available, 660 short", "raise max-postpaid-instance-vcpu-count to at least 2660", "lower pools[0].size by 6"}},
		{"spot vCPUs", func(s *Stack, a *Account) { a.SpotVCPUs = Quota{Max: 600, Used: 200} }, "autoscale[0].max_size",
			[]string{"needs 512 vCPUs", "400 available", "max-spot-instance-vcpu-count to at least 712", "lower autoscale[0].max_size by 1"}},
		{"GPUs", func(s *Stack, a *Account) { a.GPUs = Quota{Max: 160, Used: 0} }, "pools[0].size",
			[]string{"needs 192 GPUs (pools[0].size 160, autoscale[0].max_size 32)", "32 short", "the GPU quota to at least 192"}},
		{"no stock in the pool's zones", func(s *Stack, a *Account) { a.Stock[zoneA][gpu8], a.Stock[zoneB][gpu8] = SoldOut, SoldOut }, "pools[0].zone_ids",
			[]string{"no zone with " + gpu8 + " in stock", "20 of 20 nodes have no place", "add zone " + zoneC}},
		{"no stock anywhere", func(s *Stack, a *Account) { a.Stock = map[string]map[string]string{zoneA: {}} }, "pools[0].zone_ids",
			[]string{"choose another instance_type"}},
		{"vSwitch too narrow", func(s *Stack, a *Account) { a.FreeAddresses["vsw-b"] = 4 }, "pools[0].vswitch_ids",
			[]string{"needs 5 more private addresses", "vsw-b (10.0.1.0/24) has 4 free", "vsw-a is full too", "replace vSwitch vsw-b with a /23", "add zone " + zoneC}},
		{"pods on VPC addresses", func(s *Stack, a *Account) { s.Pools[0].AddressesPerNode = 17 }, "pools[0].vswitch_ids",
			// vsw-a (11 free) holds none at 17 a node, vsw-b (250 free) 14: 6 nodes of 17 are short.
			[]string{"needs 102 more private addresses (6 nodes at 17 addresses each)", "vsw-b (10.0.1.0/24) has 250 free", "12 left once nodes take them", "replace vSwitch vsw-b with a /23"}},
		{"VPC capacity", func(s *Stack, a *Account) { a.VPCInstances.Used = 14980 }, "pools[0].size",
			[]string{"needs 24 instances (pools[0].size 20, autoscale[0].max_size 4)", "20 available, 4 short", "put part of the stack in another VPC, or lower pools[0].size by 4"}},
		{"EIPs", func(s *Stack, a *Account) { a.EIPs.Used = 20 }, "eips",
			[]string{"needs 1 EIPs", "0 available", "the EIP quota (eip_quota_instances_num) to at least 21"}},
		{"NAT gateways", func(s *Stack, a *Account) { s.NATGateways = 6 }, "nat_gateways",
			[]string{"needs 6 NAT gateways", "5 available"}},
		{"load balancers", func(s *Stack, a *Account) { a.LoadBalancers = Quota{Max: 1, Used: 1} }, "load_balancers",
			[]string{"the CLB instance quota (slb_quota_instances_num) to at least 2"}},
		{"scaling groups", func(s *Stack, a *Account) { a.ScalingGroups = Quota{Max: 3, Used: 3} }, "autoscale[0].max_size",
			[]string{"the scaling group quota (Auto Scaling, MaxNumberOfScalingGroups) to at least 4", "0 available"}},
		{"scaling group max size", func(s *Stack, a *Account) { a.ScalingGroupMaxSize = 3 }, "autoscale[0].max_size",
			[]string{"largest max size a scaling group may have here, 3", "lower it to 3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, a := fitting()
			c.break_(&s, &a)
			r := Check(s, a, 20)
			if len(r.Shortfalls) != 1 {
				t.Fatalf("want 1 shortfall, got %d: %v", len(r.Shortfalls), r.Shortfalls)
			}
			e := r.Shortfalls[0]
			if e.Path != c.path {
				t.Errorf("path %q, want %q", e.Path, c.path)
			}
			msg := e.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			if e.Fix == "" || e.Why == "" || r.Fits() || !strings.HasPrefix(r.Summary, "1 shortfall") {
				t.Errorf("incomplete: why %q fix %q summary %q", e.Why, e.Fix, r.Summary)
			}
		})
	}
}

// An unknown quota or address count is not checked, and the summary says so.
func TestUnknownIsNotChecked(t *testing.T) {
	s, a := fitting()
	a.PostpaidVCPUs, a.FreeAddresses, a.Stock = Quota{}, nil, nil
	r := Check(s, a, 20)
	if !r.Fits() || !strings.Contains(r.Summary, "max-postpaid-instance-vcpu-count not checked") {
		t.Fatalf("fits %v, summary %s", r.Fits(), r.Summary)
	}
}

func TestEstimate(t *testing.T) {
	s, _ := fitting()
	s.Pools[0].Count = 250
	e := EstimateCalls(s, 20)
	for action, want := range map[string]int{"RunInstances": 3, "DescribeInstances": 6, "DescribePrice": 1, "AddBackendServers": 1,
		"CreateScalingGroup": 1, "CreateNatGateway": 1, "AllocateEipAddress": 1} {
		if e.Calls[action] != want {
			t.Errorf("%s: %d calls, want %d", action, e.Calls[action], want)
		}
	}
	sum := 0
	for _, n := range e.Calls {
		sum += n
	}
	if sum != e.Total || e.Duration != time.Duration(float64(e.Total)/20*float64(time.Second)).Round(time.Second) {
		t.Fatalf("total %d (sum %d), duration %s", e.Total, sum, e.Duration)
	}
	if EstimateCalls(s, 0).Duration != 0 {
		t.Fatal("no rate limit should give no time")
	}
}

// A pool with fallback types (instance_type_fallback) is placed as its create tries: its type
// over its zones, then each fallback over them. Where its type is out and a fallback is in
// stock it fits, and the summary says how many nodes the fallback takes where; where neither
// is, the shortfall names both.
func TestFallbackStock(t *testing.T) {
	const fb = "ecs.gn7e-c16g1.16xlarge"
	s, a := fitting()
	s.Pools[0].Fallbacks = []string{fb}
	a.Stock[zoneB][gpu8] = SoldOut
	a.Stock[zoneB][fb] = Available
	r := Check(s, a, 20)
	if !r.Fits() {
		t.Fatalf("type in zone a, fallback in zone b: shortfalls %v", r.Shortfalls)
	}
	// vsw-a's 11 free addresses take 11 of the type; zone b's 9 are the fallback's.
	if want := "pools[0].size: " + gpu8 + " out of stock or quota, nodes on fallback " + fb + " (9 in " + zoneB + ")"; !strings.Contains(r.Summary, want) {
		t.Errorf("summary lacks %q: %s", want, r.Summary)
	}

	s.Pools[0].Fallbacks = nil
	if r := Check(s, a, 20); r.Fits() {
		t.Fatalf("without the fallback, zone b has no stock and vsw-a holds 11 of 20: want a shortfall, got %s", r.Summary)
	}

	s.Pools[0].Fallbacks = []string{fb}
	a.Stock[zoneA][gpu8], a.Stock[zoneB][fb] = SoldOut, SoldOut
	a.Stock[zoneC][gpu8] = SoldOut
	r = Check(s, a, 20)
	if r.Fits() || len(r.Shortfalls) != 1 {
		t.Fatalf("neither type in stock anywhere: want one shortfall, got %v (%s)", r.Shortfalls, r.Summary)
	}
	e := r.Shortfalls[0]
	if e.Path != "pools[0].zone_ids" || !strings.Contains(e.Error(), "has no zone with "+gpu8+" or its fallbacks "+fb+" in stock") {
		t.Errorf("shortfall %s: %v; want it on pools[0].zone_ids naming the type and its fallback", e.Path, e)
	}
}

// A pay-as-you-go GPU pool places no more nodes in a zone than the ecs-spec GPU quota of its type
// there leaves; with a zone without a read quota beside it, the nodes go there; with none, the
// shortfall is on size, naming each zone's quota and the fix.
func TestSpecGPUQuota(t *testing.T) {
	s, a := fitting()
	a.SpecGPUs = map[string]map[string]Quota{zoneA: {gpu8: {Max: 64, Used: 8}}, zoneB: {gpu8: {Max: 80}}}
	// zone a: 56 GPUs left, 7 nodes (vsw-a would take 11); zone b: 10 nodes: 17 of 20.
	r := Check(s, a, 20)
	if r.Fits() || len(r.Shortfalls) != 1 {
		t.Fatalf("want one shortfall, got %v (%s)", r.Shortfalls, r.Summary)
	}
	e := r.Shortfalls[0]
	for _, want := range []string{"needs 24 more GPUs of " + gpu8 + " pay-as-you-go", zoneA + ": 64 with 8 in use", zoneB + ": 80 with 0 in use",
		"3 of 20 nodes have no place", "raise the ecs-spec quota of " + gpu8 + " (pay-as-you-go) in zone " + zoneA + " to at least 88", "lower pools[0].size by 3"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("shortfall lacks %q: %v", want, e)
		}
	}
	if e.Path != "pools[0].size" {
		t.Errorf("shortfall on %s, want pools[0].size", e.Path)
	}
	delete(a.SpecGPUs, zoneB) // zone b's quota unknown: not checked, it takes the rest
	if r := Check(s, a, 20); !r.Fits() {
		t.Fatalf("zone b unchecked: shortfalls %v", r.Shortfalls)
	}
	s.Pools[0].Spot = true // spot nodes are not held to the pay-as-you-go quota
	a.SpotVCPUs.Max = 10_000
	a.SpecGPUs[zoneB] = map[string]Quota{gpu8: {Max: 8}}
	if r := Check(s, a, 20); !r.Fits() {
		t.Fatalf("spot pool: shortfalls %v", r.Shortfalls)
	}
}

// Two pay-as-you-go pools of one type share its ecs-spec GPU quota in a zone: what the first
// takes, the second does not get.
func TestSpecGPUQuotaSharedByPools(t *testing.T) {
	s, a := fitting()
	a.SpecGPUs = map[string]map[string]Quota{zoneB: {gpu8: {Max: 64}}}
	s.Pools[0].Zones, s.Pools[0].Count = []string{zoneB}, 5 // 40 of zone b's 64 GPUs
	second := s.Pools[0]
	second.Path = "pools[1]" // 5 more nodes: 24 GPUs left hold 3
	s.Pools = append(s.Pools, second)
	r := Check(s, a, 20)
	if r.Fits() || len(r.Shortfalls) != 1 {
		t.Fatalf("want one shortfall, on the second pool, got %v (%s)", r.Shortfalls, r.Summary)
	}
	e := r.Shortfalls[0]
	for _, want := range []string{"needs 16 more GPUs of " + gpu8, zoneB + ": 64 with 0 in use", "2 of 5 nodes have no place"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("shortfall lacks %q: %v", want, e)
		}
	}
	if e.Path != "pools[1].size" {
		t.Errorf("shortfall on %s, want pools[1].size", e.Path)
	}
}
