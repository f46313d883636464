package nas

import (
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// A file system placed in a VPC, and a mount target in a vSwitch, hold their network: the VPC
// API refuses to delete it (DependencyViolation) until they are gone.
func init() {
	emuvpc.RegisterDependent(emuvpc.Dependent{Vpc: vpcDependency, VSwitch: vSwitchDependency})
}

func vpcDependency(stores *core.Stores, vpcID string) *core.Error {
	for _, f := range StoreIn(stores).FileSystems {
		if f.VpcID == vpcID {
			return core.ErrDependency("VPC %s is still used by file system %s.", vpcID, f.ID)
		}
	}
	return nil
}

func vSwitchDependency(stores *core.Stores, vswID string) *core.Error {
	for _, f := range StoreIn(stores).FileSystems {
		for _, m := range f.Mounts {
			if m.VSwitchID == vswID {
				return core.ErrDependency("vSwitch %s still has NAS mount target %s; delete it first.", vswID, m.Domain)
			}
		}
	}
	return nil
}
