package catalog

import (
	"cmp"
	"fmt"
	"slices"
)

// ImageBuilderType is the smallest GPU type an image builder can bake on: one with an NVSwitch
// fabric when nvswitch (Fabric Manager starts only where NVSwitches are, so the builder's check
// of it passes only there), one with eRDMA interfaces when erdma (the eRDMA packages' check reads
// the device), and otherwise one without NVSwitch. Types that need an HPC cluster, are
// confidential-computing or that the vendor restricts are left out: a builder is a plain
// instance in the network's vSwitch. Smallest is fewest vCPUs, then least memory, then name: the
// cheapest machine that runs the install, which takes the same time on any of them.
func ImageBuilderType(nvswitch, erdma bool) (InstanceType, error) {
	var fits []InstanceType
	for _, t := range GPUInstanceTypes() {
		if t.NVSwitch != nvswitch || (erdma && !t.ERI) || t.RequiresHPCCluster || t.ConfidentialComputing || t.AvailabilityNote != "" {
			continue
		}
		fits = append(fits, t)
	}
	if len(fits) == 0 {
		return InstanceType{}, fmt.Errorf("no GPU type in the catalog has nvswitch = %t and erdma = %t", nvswitch, erdma)
	}
	return slices.MinFunc(fits, smallerType), nil
}

// smallerType orders types by fewest vCPUs, then least memory, then name.
func smallerType(a, b InstanceType) int {
	return cmp.Or(cmp.Compare(a.VCPU, b.VCPU), cmp.Compare(a.MemoryGiB, b.MemoryGiB), cmp.Compare(a.Name, b.Name))
}

// ControlPlaneImageBuilderType is the smallest CPU type, the builder of a control-plane image:
// that image holds no GPU software, so nothing in its bake needs a GPU, and an image made on one
// ECS type boots on the others of its architecture (the control-plane pools' g7 and c7 types).
func ControlPlaneImageBuilderType() InstanceType {
	return slices.MinFunc(CPUInstanceTypes(), smallerType)
}
