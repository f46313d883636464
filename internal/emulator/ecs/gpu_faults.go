package ecs

import (
	"fmt"
	"slices"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// GPU faults are hardware faults of an instance's GPUs, injected through the emulator's admin API
// (POST /_emulator/gpu_faults) and saved with the instance: ECS itself answers nothing of them
// (no API call shows a GPU's health); the node agent reads them from InstanceView.GPUFaults and
// plays what the node's own tools would report (internal/emulator/nodeagent, gpuhealth.go).

// GPUFault is one faulty GPU of an instance. XID is the last XID error the driver reported for
// it (0: none; NVIDIA's codes, https://docs.nvidia.com/deploy/xid-errors/index.html). NVLinkGBs
// is the GPU's degraded NVLink bandwidth in GB/s, both directions added as NVIDIA quotes it (A100
// SXM: 600 healthy); ERDMAGbps the instance's degraded eRDMA bandwidth in Gbit/s, as the vendor
// quotes it: a property of the node's network interfaces, carried on the fault of any of its GPUs
// (the lowest counts). 0 leaves a figure healthy.
type GPUFault struct {
	InstanceID string  `json:"instance_id"`
	GPU        int     `json:"gpu"`
	XID        int     `json:"xid,omitempty"`
	NVLinkGBs  float64 `json:"nvlink_gbs,omitempty"`
	ERDMAGbps  float64 `json:"erdma_gbps,omitempty"`
}

// NextInstance, as a fault's instance_id, holds the fault pending for the next instance launched
// (RunInstances, or a scaling group's launch through it) that has the fault's GPU: a test can
// then fault a node a provider or an autoscaler creates, before anyone knows its id. The
// launch consumes it; only the first such instance of a call gets it.
const NextInstance = "next"

// SetGPUFault records f on its instance, replacing a fault of the same GPU, or holds it pending
// for the next launched instance (NextInstance). It refuses an instance that does not exist, a
// type without GPUs, a GPU index outside the type's count, a negative figure, and a fault that
// changes nothing.
func SetGPUFault(cc *core.Call, f GPUFault) error {
	c := newCall(cc)
	if f.InstanceID == NextInstance {
		if f.GPU < 0 {
			return fmt.Errorf("gpu %d is not a GPU index (they start at 0)", f.GPU)
		}
		if err := faultSetsFigures(f); err != nil {
			return err
		}
		c.st.PendingGPUFaults = withFault(c.st.PendingGPUFaults, f)
		return nil
	}
	in := c.st.Instances[f.InstanceID]
	if in == nil {
		return fmt.Errorf("instance %q does not exist", f.InstanceID)
	}
	gpus := 0
	if it := instanceTypes[in.Type]; it != nil {
		gpus = it.GPUs
	}
	switch {
	case gpus == 0:
		return fmt.Errorf("instance %s is %s, which has no GPU", in.ID, in.Type)
	case f.GPU < 0 || f.GPU >= gpus:
		return fmt.Errorf("gpu %d: instance %s (%s) has %d GPUs, indexed 0 to %d", f.GPU, in.ID, in.Type, gpus, gpus-1)
	}
	if err := faultSetsFigures(f); err != nil {
		return err
	}
	in.GPUFaults = withFault(in.GPUFaults, f)
	return nil
}

// faultSetsFigures refuses a negative figure and a fault that sets none.
func faultSetsFigures(f GPUFault) error {
	switch {
	case f.XID < 0 || f.NVLinkGBs < 0 || f.ERDMAGbps < 0:
		return fmt.Errorf("xid, nvlink_gbs and erdma_gbps are not negative (got %d, %g, %g)", f.XID, f.NVLinkGBs, f.ERDMAGbps)
	case f.XID == 0 && f.NVLinkGBs == 0 && f.ERDMAGbps == 0:
		return fmt.Errorf("a fault sets xid, nvlink_gbs or erdma_gbps; to clear GPU %d of %s, DELETE it", f.GPU, f.InstanceID)
	}
	return nil
}

// withFault is faults with f in place of the fault of the same GPU, by GPU index.
func withFault(faults []GPUFault, f GPUFault) []GPUFault {
	if i := slices.IndexFunc(faults, func(g GPUFault) bool { return g.GPU == f.GPU }); i >= 0 {
		faults[i] = f
		return faults
	}
	faults = append(faults, f)
	slices.SortFunc(faults, func(a, b GPUFault) int { return a.GPU - b.GPU })
	return faults
}

// takePendingGPUFaults moves the pending faults (NextInstance) that name a GPU of a just
// launched instance with gpus GPUs onto it; the others stay pending.
func (d *Store) takePendingGPUFaults(in *instance, gpus int) {
	var left []GPUFault
	for _, f := range d.PendingGPUFaults {
		if f.GPU >= gpus {
			left = append(left, f)
			continue
		}
		f.InstanceID = in.ID
		in.GPUFaults = withFault(in.GPUFaults, f)
	}
	d.PendingGPUFaults = left
}

// ClearGPUFaults clears the fault of GPU gpu of the instance (a GPU reset), or every fault of the
// instance when gpu is negative, and answers how many it cleared. An instance that does not exist
// is an error; one without the fault clears nothing.
func ClearGPUFaults(cc *core.Call, instanceID string, gpu int) (int, error) {
	c := newCall(cc)
	if instanceID == NextInstance {
		before := len(c.st.PendingGPUFaults)
		c.st.PendingGPUFaults = slices.DeleteFunc(c.st.PendingGPUFaults, func(g GPUFault) bool { return gpu < 0 || g.GPU == gpu })
		if len(c.st.PendingGPUFaults) == 0 {
			c.st.PendingGPUFaults = nil
		}
		return before - len(c.st.PendingGPUFaults), nil
	}
	in := c.st.Instances[instanceID]
	if in == nil {
		return 0, fmt.Errorf("instance %q does not exist", instanceID)
	}
	before := len(in.GPUFaults)
	in.GPUFaults = slices.DeleteFunc(in.GPUFaults, func(g GPUFault) bool { return gpu < 0 || g.GPU == gpu })
	if len(in.GPUFaults) == 0 {
		in.GPUFaults = nil
	}
	return before - len(in.GPUFaults), nil
}

// GPUFaults lists the faults of every live instance, in creation order, then by GPU.
func GPUFaults(cc *core.Call) []GPUFault {
	c := newCall(cc)
	out := []GPUFault{}
	for _, in := range c.st.order {
		out = append(out, in.GPUFaults...)
	}
	return out
}

// PendingGPUFaults lists the faults held for the next launched instance (NextInstance), by GPU.
func PendingGPUFaults(cc *core.Call) []GPUFault {
	return append([]GPUFault{}, newCall(cc).st.PendingGPUFaults...)
}
