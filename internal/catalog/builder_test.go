package catalog

import "testing"

// The builder type has what the image is baked for, and is the smallest such type.
func TestImageBuilderType(t *testing.T) {
	for _, c := range []struct {
		nvswitch, erdma bool
	}{{false, false}, {true, false}, {false, true}, {true, true}} {
		got, err := ImageBuilderType(c.nvswitch, c.erdma)
		if err != nil {
			t.Fatalf("nvswitch %t erdma %t: %v", c.nvswitch, c.erdma, err)
		}
		if got.NVSwitch != c.nvswitch || (c.erdma && !got.ERI) || got.RequiresHPCCluster {
			t.Errorf("nvswitch %t erdma %t: %s (nvswitch %t, eri %t, hpc %t)", c.nvswitch, c.erdma, got.Name, got.NVSwitch, got.ERI, got.RequiresHPCCluster)
		}
		for _, other := range GPUInstanceTypes() {
			if other.NVSwitch == c.nvswitch && (!c.erdma || other.ERI) && !other.RequiresHPCCluster && !other.ConfidentialComputing &&
				other.AvailabilityNote == "" && other.VCPU < got.VCPU {
				t.Errorf("nvswitch %t erdma %t: %s has %d vCPUs, %s only %d", c.nvswitch, c.erdma, got.Name, got.VCPU, other.Name, other.VCPU)
			}
		}
		t.Logf("nvswitch %t erdma %t: %s", c.nvswitch, c.erdma, got.Name)
	}
}

// A control-plane image is baked on the smallest CPU type: no GPU, and none smaller.
func TestControlPlaneImageBuilderType(t *testing.T) {
	got := ControlPlaneImageBuilderType()
	if got.IsGPU() {
		t.Fatalf("control-plane builder %s has a GPU", got.Name)
	}
	for _, o := range CPUInstanceTypes() {
		if o.VCPU < got.VCPU || (o.VCPU == got.VCPU && o.MemoryGiB < got.MemoryGiB) {
			t.Errorf("%s (%d vCPU, %v GiB) is smaller than the chosen %s", o.Name, o.VCPU, o.MemoryGiB, got.Name)
		}
	}
}
