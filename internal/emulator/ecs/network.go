package ecs

import (
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// What the VPC API (package vpc) needs of ECS: ECS stands on VPC, so VPC cannot import it and
// offers hooks instead.
func init() {
	// An EIP binds to an instance; DescribeVSwitches counts the addresses instances take.
	emuvpc.UseInstances(emuvpc.Instances{
		Find: func(cc *core.Call, id string) (emuvpc.Instance, bool) {
			c := newCall(cc)
			in := c.st.Instances[id]
			if in == nil {
				return emuvpc.Instance{}, false
			}
			return emuvpc.Instance{Region: in.Region, VpcID: in.VpcID, IP: in.IP, Status: c.status(in)}, true
		},
		InVSwitch: func(c *core.Call, vswID string) int { return len(StoreIn(c.Stores).byVSwitch[vswID]) },
	})
	// Instances hold their VPC and vSwitch: the vendor names DependencyViolation.Instance
	// first (instances hold the vSwitches and groups too), the security groups after the
	// VPC's vSwitches.
	emuvpc.RegisterDependent(emuvpc.Dependent{Rank: emuvpc.RankInstances,
		Vpc: func(c *core.Call, vpcID string) *core.Error {
			for _, in := range StoreIn(c.Stores).order {
				if in.VpcID == vpcID {
					return core.Errf(400, "DependencyViolation.Instance", "VPC %s still has instance %s; release it first.", vpcID, in.ID)
				}
			}
			return nil
		},
		VSwitch: func(c *core.Call, vswID string) *core.Error {
			if n := len(StoreIn(c.Stores).byVSwitch[vswID]); n > 0 {
				return core.ErrDependency("vSwitch %s still has %d instance(s); delete them first.", vswID, n)
			}
			return nil
		},
	})
	emuvpc.RegisterDependent(emuvpc.Dependent{Rank: emuvpc.RankSecurityGroups,
		Vpc: func(c *core.Call, vpcID string) *core.Error {
			d := StoreIn(c.Stores)
			for _, id := range core.SortedKeys(d.SGs) {
				if g := d.SGs[id]; g.VpcID == vpcID {
					return core.Errf(400, "DependencyViolation.SecurityGroup", "VPC %s still has security group %s; delete it first.", vpcID, g.ID)
				}
			}
			return nil
		},
	})
}
