package nas

import (
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// A file system placed in a VPC, and a mount target in a vSwitch, hold their network: the VPC
// API refuses to delete it (DependencyViolation) until they are gone.
func init() {
	emuvpc.RegisterDependent(emuvpc.Dependent{Rank: emuvpc.RankFileSystems, Vpc: vpcDependency, VSwitch: vSwitchDependency})
}

func vpcDependency(c *core.Call, vpcID string) *core.Error {
	for _, f := range StoreIn(c.Stores).FileSystems {
		if f.VpcID == vpcID {
			return core.ErrDependency("VPC %s is still used by file system %s.", vpcID, f.ID)
		}
	}
	return nil
}

func vSwitchDependency(c *core.Call, vswID string) *core.Error {
	for _, f := range StoreIn(c.Stores).FileSystems {
		for _, m := range f.Mounts {
			if m.VSwitchID == vswID {
				return core.ErrDependency("vSwitch %s still has NAS mount target %s; delete it first.", vswID, m.Domain)
			}
		}
	}
	return nil
}
