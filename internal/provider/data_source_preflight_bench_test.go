package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/preflight"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// BenchmarkPreflightRead is what gpucluster_preflight adds to a plan, the CLI aside: the stack
// mapped, the account read from the emulator over loopback and the check, for 1,000 and 10,000
// nodes in pools of 100 over three /16 vSwitches. calls/op is the API calls of one read, which
// must not grow with the nodes.
func BenchmarkPreflightRead(b *testing.B) {
	c := cloudtest.Start(b, 0)
	ctx := context.Background()
	var vsws []string
	for _, sw := range benchVSwitches(b, c) {
		vsws = append(vsws, sw.ID)
	}
	for _, run := range []struct {
		nodes int
		// mixed: every other pool spot, every tenth autoscaling to twice its size, and a load
		// balancer, an EIP and a NAT gateway (each read from the Quota Center, the NAT gateways
		// counted in the vSwitches' VPC)
		mixed bool
	}{{1000, false}, {10000, false}, {1000, true}, {10000, true}} {
		nodes := run.nodes
		var m preflightModel
		if run.mixed {
			m.LoadBalancers, m.EIPs, m.NATGateways = types.Int64Value(1), types.Int64Value(1), types.Int64Value(1)
		}
		for i := 0; i*100 < nodes; i++ {
			size := int64(min(100, nodes-i*100))
			p := preflightPoolModel{InstanceType: types.StringValue("ecs.gn7e-c16g1.32xlarge"),
				Size: types.Int64Value(size), VSwitchIDs: vsws}
			if run.mixed {
				p.Spot = types.BoolValue(i%2 == 1)
				if i%10 == 0 {
					p.MaxSize = types.Int64Value(2 * size)
				}
			}
			m.Pools = append(m.Pools, p)
		}
		name := fmt.Sprintf("nodes=%d", nodes)
		if run.mixed {
			name += "/spot+autoscaling+lb+eip+nat"
		}
		b.Run(name, func(b *testing.B) {
			before := c.Emulator.Stats().Total
			for b.Loop() {
				s, err := preflightStack(m)
				if err != nil {
					b.Fatal(err)
				}
				a, err := readPreflightAccount(ctx, c.Client, m, &s)
				if err != nil {
					b.Fatal(err)
				}
				if r := preflight.Check(s, a, cloud.DefaultRateLimit); !r.Fits() {
					b.Fatalf("%d nodes: %v", nodes, r.Shortfalls)
				}
			}
			b.ReportMetric(float64(c.Emulator.Stats().Total-before)/float64(b.N), "calls/op")
		})
	}
}

// BenchmarkPoolPreflight is what gpucluster_node_pool's own plan check adds to the plan of a pool
// that grows from nothing to 1,000 and 10,000 nodes (fixed, spot, autoscaling) over three /16
// vSwitches: the account read (readQuotasAndStock, the count of the pool's own nodes,
// readScalingQuota for autoscaling) and
// CheckPool. calls/op must not grow with the nodes.
func BenchmarkPoolPreflight(b *testing.B) {
	c := cloudtest.Start(b, 0)
	ctx := context.Background()
	pool := preflight.Pool{InstanceType: "ecs.gn7e-c16g1.32xlarge", VCPUs: 128, GPUs: 8, VSwitches: map[string]preflight.VSwitch{}}
	free := map[string]int{}
	for _, sw := range benchVSwitches(b, c) {
		pool.Zones = append(pool.Zones, sw.ZoneID)
		pool.VSwitches[sw.ZoneID] = preflight.VSwitch{ID: sw.ID, CIDR: sw.CIDRBlock}
		free[sw.ID] = sw.FreeAddresses
	}
	for _, nodes := range []int{1000, 10000} {
		for _, kind := range []string{"fixed", "spot", "autoscaling"} {
			b.Run(fmt.Sprintf("nodes=%d/%s", nodes, kind), func(b *testing.B) {
				p := pool
				p.Spot = kind == "spot"
				g := preflight.Growth{Planned: nodes}
				if kind == "autoscaling" {
					p.Attrs.Size = "autoscaling.max_size"
					g.Group, g.NewGroup = &preflight.ScalingGroup{Path: "autoscaling", InstanceType: p.InstanceType, Limit: nodes}, true
				}
				before := c.Emulator.Stats().Total
				for b.Loop() {
					var spotStocks func(context.Context) ([]cloud.InstanceTypeStock, error)
					if p.Spot {
						spotStocks = c.Client.SpotInstanceTypeStocks
					}
					a, err := readQuotasAndStock(ctx, c.Client, spotStocks)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := c.Client.CountInstancesByTags(ctx, map[string]string{tagging.PoolName: "bench", tagging.PoolNetwork: "sg-bench"}); err != nil {
						b.Fatal(err) // a new pool's own nodes (checkPoolPreflight)
					}
					if g.Group != nil {
						if err := readScalingQuota(ctx, c.Client, &a); err != nil {
							b.Fatal(err)
						}
						a.ScalingGroupMaxSize = 0 // the vendor's 2,000 is below 10,000: the size limit is not what is measured
					}
					for id, n := range free {
						a.FreeAddresses[id] = n
					}
					if r := preflight.CheckPool(p, g, a, cloud.DefaultRateLimit); !r.Fits() {
						b.Fatalf("%d nodes: %v", nodes, r.Shortfalls)
					}
				}
				b.ReportMetric(float64(c.Emulator.Stats().Total-before)/float64(b.N), "calls/op")
			})
		}
	}
}

// benchVSwitches makes a VPC with a /16 vSwitch in each of three zones and reads them back.
func benchVSwitches(b *testing.B, c *cloudtest.Cloud) []cloud.VSwitch {
	ctx := context.Background()
	vpcID, err := c.Client.CreateVPC(ctx, cloud.VPCInput{Name: "bench", CIDRBlock: "10.0.0.0/8"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Client.WaitVPCAvailable(ctx, vpcID); err != nil {
		b.Fatal(err)
	}
	var out []cloud.VSwitch
	for i, z := range []string{"a", "b", "c"} {
		id, err := c.Client.CreateVSwitch(ctx, cloud.VSwitchInput{VPCID: vpcID, ZoneID: cloudtest.Region + "-" + z, CIDRBlock: fmt.Sprintf("10.%d.0.0/16", i), Name: "bench-" + z})
		if err != nil {
			b.Fatal(err)
		}
		sw, err := c.Client.FindVSwitch(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, *sw)
	}
	return out
}
