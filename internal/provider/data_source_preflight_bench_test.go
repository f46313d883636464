package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/preflight"
)

// BenchmarkPreflightRead is what gpucluster_preflight adds to a plan, the CLI aside: the stack
// mapped, the account read from the emulator over loopback and the check, for 1,000 and 10,000
// nodes in pools of 100 over three /16 vSwitches. calls/op is the API calls of one read, which
// must not grow with the nodes.
func BenchmarkPreflightRead(b *testing.B) {
	c := cloudtest.Start(b, 0)
	ctx := context.Background()
	vpcID, err := c.Client.CreateVPC(ctx, cloud.VPCInput{Name: "bench", CIDRBlock: "10.0.0.0/8"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Client.WaitVPCAvailable(ctx, vpcID); err != nil {
		b.Fatal(err)
	}
	var vsws []string
	for i, z := range []string{"a", "b", "c"} {
		id, err := c.Client.CreateVSwitch(ctx, cloud.VSwitchInput{VPCID: vpcID, ZoneID: cloudtest.Region + "-" + z, CIDRBlock: fmt.Sprintf("10.%d.0.0/16", i), Name: "bench-" + z})
		if err != nil {
			b.Fatal(err)
		}
		vsws = append(vsws, id)
	}
	for _, nodes := range []int{1000, 10000} {
		var m preflightModel
		for i := 0; i*100 < nodes; i++ {
			m.Pools = append(m.Pools, preflightPoolModel{InstanceType: types.StringValue("ecs.gn7e-c16g1.32xlarge"),
				Size: types.Int64Value(int64(min(100, nodes-i*100))), VSwitchIDs: vsws})
		}
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
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
