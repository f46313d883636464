package ecs

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

// TestCatalogMatchesProviderCatalog keeps the emulator's instance types equal to
// the provider's catalog (both carry SOURCES.md section 1): every type on one
// side exists on the other with the same vCPU, memory, GPU count and baseline
// network bandwidth, GPU memory per GPU, and eRDMA (EriQuantity > 0) exactly where the catalog has ERI.
func TestCatalogMatchesProviderCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, want := range catalog.InstanceTypes() {
		seen[want.Name] = true
		got, ok := instanceTypes[want.Name]
		if !ok {
			t.Errorf("%s is in the catalog but not in the emulator", want.Name)
			continue
		}
		if got.VCPU != want.VCPU || got.MemGiB != want.MemoryGiB || got.GPUs != want.GPUs || got.NetGbits != want.NetworkGbps {
			t.Errorf("%s: emulator %d/%v/%d/%v, catalog %d/%v/%d/%v", want.Name,
				got.VCPU, got.MemGiB, got.GPUs, got.NetGbits, want.VCPU, want.MemoryGiB, want.GPUs, want.NetworkGbps)
		}
		if got.GPUs > 0 && got.fam.GPUMemGiB != float64(want.GPUMemoryGB) {
			t.Errorf("%s: emulator GPU memory %v GiB, catalog %d GB", want.Name, got.fam.GPUMemGiB, want.GPUMemoryGB)
		}
		if (got.fam.Eri > 0) != want.ERI {
			t.Errorf("%s: emulator EriQuantity %d, catalog ERI %v", want.Name, got.fam.Eri, want.ERI)
		}
		if got.fam.NeedsHpc != want.RequiresHPCCluster {
			t.Errorf("%s: emulator needs HPC cluster %v, catalog %v", want.Name, got.fam.NeedsHpc, want.RequiresHPCCluster)
		}
	}
	for _, name := range instanceTypeOrder {
		if !seen[name] {
			t.Errorf("%s is in the emulator but not in the catalog", name)
		}
	}
}
