package preflight

import (
	"fmt"
	"testing"
)

// bigStack is nodes GPU nodes in pools of 100 over three zones, each pool with its own vSwitches,
// and an account that holds them: the preflight of a 1,000- or 10,000-node cluster.
func bigStack(nodes int) (Stack, Account) {
	zones := []string{zoneA, zoneB, zoneC}
	a := Account{
		PostpaidVCPUs: Quota{Max: nodes * 128}, SpotVCPUs: Quota{Max: 1000}, GPUs: Quota{Max: nodes * 8},
		Stock: map[string]map[string]string{}, FreeAddresses: map[string]int{},
		EIPs: Quota{Max: 20}, NATGateways: Quota{Max: 5}, LoadBalancers: Quota{Max: 60}, ScalingGroups: Quota{Max: 100},
		VPCInstances: Quota{Max: VPCInstanceCapacity},
	}
	for _, z := range zones {
		a.Stock[z] = map[string]string{gpu8: Available}
	}
	var s Stack
	for i := 0; i*100 < nodes; i++ {
		p := Pool{Path: fmt.Sprintf("pools[%d]", i), InstanceType: gpu8, VCPUs: 128, GPUs: 8, Count: min(100, nodes-i*100),
			Zones: zones, VSwitches: map[string]VSwitch{}}
		for j, z := range zones {
			id := fmt.Sprintf("vsw-%d-%d", i, j)
			p.VSwitches[z] = VSwitch{ID: id, CIDR: "10.0.0.0/26"}
			a.FreeAddresses[id] = 40
		}
		s.Pools = append(s.Pools, p)
	}
	s.LoadBalancers, s.EIPs, s.NATGateways, s.Backends = 1, 1, 1, 3
	return s, a
}

func BenchmarkCheck(b *testing.B) {
	for _, nodes := range []int{1000, 10000} {
		s, a := bigStack(nodes)
		if r := Check(s, a, 20); !r.Fits() {
			b.Fatalf("%d nodes: %v", nodes, r.Shortfalls)
		}
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Check(s, a, 20)
			}
		})
	}
}
