package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// publishedSizes is the family table of SOURCES.md section 1, one row
// per size: name, family, vCPU, RAM GiB, GPUs, network Gbit/s, GPU memory GB.
// eRDMA and bare metal are per family (publishedFamilies) and checked on
// every row. Figures are the vendor's tables on
// https://www.alibabacloud.com/help/en/ecs/user-guide/gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1
// (sccgn7ex: https://www.alibabacloud.com/help/en/ecs/user-guide/scc-overview).
var publishedSizes = []struct {
	name, family string
	vcpu         int
	mem          float64
	gpus         int
	net          float64
	gpuMemGB     int
}{
	{"ecs.gn6i-c4g1.xlarge", "gn6i", 4, 15, 1, 4, 16},
	{"ecs.gn6i-c8g1.2xlarge", "gn6i", 8, 31, 1, 5, 16},
	{"ecs.gn6i-c16g1.4xlarge", "gn6i", 16, 62, 1, 6, 16},
	{"ecs.gn6i-c24g1.6xlarge", "gn6i", 24, 93, 1, 7.5, 16},
	{"ecs.gn6i-c40g1.10xlarge", "gn6i", 40, 155, 1, 10, 16},
	{"ecs.gn6i-c24g1.12xlarge", "gn6i", 48, 186, 2, 15, 16},
	{"ecs.gn6i-c24g1.24xlarge", "gn6i", 96, 372, 4, 30, 16},
	{"ecs.gn6v-c8g1.2xlarge", "gn6v", 8, 32, 1, 2.5, 16},
	{"ecs.gn6v-c8g1.4xlarge", "gn6v", 16, 64, 2, 5, 16},
	{"ecs.gn6v-c8g1.8xlarge", "gn6v", 32, 128, 4, 10, 16},
	{"ecs.gn6v-c8g1.16xlarge", "gn6v", 64, 256, 8, 20, 16},
	{"ecs.gn6v-c10g1.20xlarge", "gn6v", 82, 336, 8, 35, 16},
	{"ecs.gn6e-c12g1.3xlarge", "gn6e", 12, 92, 1, 5, 32},
	{"ecs.gn6e-c12g1.6xlarge", "gn6e", 24, 184, 2, 8, 32},
	{"ecs.gn6e-c12g1.12xlarge", "gn6e", 48, 368, 4, 16, 32},
	{"ecs.gn6e-c12g1.24xlarge", "gn6e", 96, 736, 8, 32, 32},
	{"ecs.gn7-c12g1.3xlarge", "gn7", 12, 94, 1, 4, 40},
	{"ecs.gn7-c13g1.13xlarge", "gn7", 52, 378, 4, 16, 40},
	{"ecs.gn7-c13g1.26xlarge", "gn7", 104, 756, 8, 30, 40},
	{"ecs.gn7e-c16g1.4xlarge", "gn7e", 16, 125, 1, 8, 80},
	{"ecs.gn7e-c16g1.8xlarge", "gn7e", 32, 250, 2, 16, 80},
	{"ecs.gn7e-c16g1.16xlarge", "gn7e", 64, 500, 4, 32, 80},
	{"ecs.gn7e-c16g1.32xlarge", "gn7e", 128, 1000, 8, 64, 80},
	{"ecs.gn7i-c8g1.2xlarge", "gn7i", 8, 30, 1, 16, 24},
	{"ecs.gn7i-c16g1.4xlarge", "gn7i", 16, 60, 1, 16, 24},
	{"ecs.gn7i-c32g1.8xlarge", "gn7i", 32, 188, 1, 16, 24},
	{"ecs.gn7i-c32g1.16xlarge", "gn7i", 64, 376, 2, 32, 24},
	{"ecs.gn7i-c32g1.32xlarge", "gn7i", 128, 752, 4, 64, 24},
	{"ecs.gn7i-c48g1.12xlarge", "gn7i", 48, 310, 1, 16, 24},
	{"ecs.gn7i-c56g1.14xlarge", "gn7i", 56, 346, 1, 16, 24},
	{"ecs.gn7i-2x.8xlarge", "gn7i", 32, 128, 2, 16, 24},
	{"ecs.gn7i-4x.8xlarge", "gn7i", 32, 128, 4, 32, 24},
	{"ecs.gn7i-4x.16xlarge", "gn7i", 64, 256, 4, 64, 24},
	{"ecs.gn7i-8x.32xlarge", "gn7i", 128, 512, 8, 64, 24},
	{"ecs.gn7i-8x.16xlarge", "gn7i", 64, 256, 8, 32, 24},
	{"ecs.gn7s-c8g1.2xlarge", "gn7s", 8, 60, 1, 16, 24},
	{"ecs.gn7s-c16g1.4xlarge", "gn7s", 16, 120, 1, 16, 24},
	{"ecs.gn7s-c32g1.8xlarge", "gn7s", 32, 250, 1, 16, 24},
	{"ecs.gn7s-c32g1.16xlarge", "gn7s", 64, 500, 2, 32, 24},
	{"ecs.gn7s-c32g1.32xlarge", "gn7s", 128, 1000, 4, 64, 24},
	{"ecs.gn7s-c48g1.12xlarge", "gn7s", 48, 380, 1, 16, 24},
	{"ecs.gn7s-c56g1.14xlarge", "gn7s", 56, 440, 1, 16, 24},
	{"ecs.gn8is.2xlarge", "gn8is", 8, 64, 1, 8, 48},
	{"ecs.gn8is.4xlarge", "gn8is", 16, 128, 1, 16, 48},
	{"ecs.gn8is-2x.8xlarge", "gn8is", 32, 256, 2, 32, 48},
	{"ecs.gn8is-4x.16xlarge", "gn8is", 64, 512, 4, 64, 48},
	{"ecs.gn8is-8x.32xlarge", "gn8is", 128, 1024, 8, 100, 48},
	{"ecs.gn8v.4xlarge", "gn8v", 16, 96, 1, 12, 96},
	{"ecs.gn8v.6xlarge", "gn8v", 24, 128, 1, 15, 96},
	{"ecs.gn8v-2x.8xlarge", "gn8v", 32, 192, 2, 20, 96},
	{"ecs.gn8v-4x.8xlarge", "gn8v", 32, 384, 4, 20, 96},
	{"ecs.gn8v-2x.12xlarge", "gn8v", 48, 256, 2, 25, 96},
	{"ecs.gn8v-8x.16xlarge", "gn8v", 64, 768, 8, 32, 96},
	{"ecs.gn8v-4x.24xlarge", "gn8v", 96, 512, 4, 50, 96},
	{"ecs.gn8v-8x.48xlarge", "gn8v", 192, 1024, 8, 100, 96},
	{"ecs.ebmgn7e.32xlarge", "ebmgn7e", 128, 1024, 8, 64, 80},
	{"ecs.ebmgn7ex.32xlarge", "ebmgn7ex", 128, 1024, 8, 160, 80},
	{"ecs.ebmgn8v.48xlarge", "ebmgn8v", 192, 1024, 8, 170, 96},
	{"ecs.sccgn7ex.32xlarge", "sccgn7ex", 128, 1024, 8, 64, 80},
	{"ecs.ebmgn7.26xlarge", "ebmgn7", 104, 768, 8, 30, 40},
	{"ecs.ebmgn7i.32xlarge", "ebmgn7i", 128, 768, 4, 64, 24},
	{"ecs.ebmgn8ia.64xlarge", "ebmgn8ia", 256, 1536, 4, 160, 48},
	{"ecs.ebmgn6e.24xlarge", "ebmgn6e", 96, 768, 8, 32, 32},
	{"ecs.ebmgn6v.24xlarge", "ebmgn6v", 96, 384, 8, 30, 16},
	{"ecs.ebmgn6i.24xlarge", "ebmgn6i", 96, 384, 4, 30, 16},
	{"ecs.ebmgn8is.32xlarge", "ebmgn8is", 128, 1024, 8, 160, 48},
	{"ecs.gn8v-tee.4xlarge", "gn8v-tee", 16, 96, 1, 12, 96},
	{"ecs.gn8v-tee.6xlarge", "gn8v-tee", 24, 128, 1, 15, 96},
	{"ecs.gn8v-tee-8x.16xlarge", "gn8v-tee", 64, 768, 8, 32, 96},
	{"ecs.gn8v-tee-8x.48xlarge", "gn8v-tee", 192, 1024, 8, 100, 96},
}

// publishedFamilies: per family, the catalog GPU key, whether the vendor names the
// model, the nvidia-smi MiB figure (0 = not given), NVLink, ERI (eRDMA), bare
// metal (the vendor builds SCC on ECS Bare Metal) and whether the vendor sells
// the family only in some regions, through sales.
var publishedFamilies = map[string]struct {
	gpu       string
	stated    bool
	mib       int
	nvlink    bool
	eri       bool
	bareMetal bool
	regional  bool
}{
	"gn6i":     {"T4", true, 15109, false, false, false, false},
	"gn6v":     {"V100-16GB", true, 16160, true, false, false, false},
	"gn6e":     {"V100-32GB", true, 32510, true, false, false, false},
	"gn7":      {"A100-40GB", false, 40537, true, false, false, false},
	"gn7e":     {"A100-80GB", false, 81251, true, false, false, false},
	"gn7i":     {"A10", true, 22731, false, false, false, false},
	"gn7s":     {"A30", true, 0, false, false, false, false},
	"gn8is":    {"L20", true, 0, false, true, false, true},
	"gn8v":     {"Hopper-96GB", false, 0, true, true, false, true},
	"ebmgn7e":  {"A100-80GB", false, 0, true, false, true, false},
	"ebmgn7ex": {"A100-80GB", false, 0, true, true, true, false},
	"ebmgn8v":  {"Hopper-96GB", false, 0, true, true, true, true},
	"sccgn7ex": {"A100-80GB", false, 0, true, false, true, false},
	"ebmgn7":   {"A100-40GB", false, 0, false, false, true, false},
	"ebmgn7i":  {"A10", true, 0, false, false, true, false},
	"ebmgn8ia": {"L20", true, 0, false, true, true, true},
	"ebmgn6e":  {"V100-32GB", true, 0, true, false, true, false},
	"ebmgn6v":  {"V100-16GB", true, 0, true, false, true, false},
	"ebmgn6i":  {"T4", true, 0, false, false, true, false},
	"ebmgn8is": {"L20", true, 0, false, true, true, true},
	// gn8v-tee: the vendor states neither eRDMA nor a region limit for it,
	// and its NVLink firewall blocks GPU-to-GPU memory access (no NVLink figure).
	"gn8v-tee": {"Hopper-96GB", false, 0, false, false, false, false},
}

func TestInstanceTypesMatchSources(t *testing.T) {
	for _, want := range publishedSizes {
		t.Run(want.name, func(t *testing.T) {
			got, ok := LookupInstanceType(want.name)
			if !ok {
				t.Fatalf("LookupInstanceType(%q) not found", want.name)
			}
			short, ok := LookupInstanceType(strings.TrimPrefix(want.name, "ecs."))
			if !ok || short.Name != got.Name {
				t.Errorf("lookup without prefix: got %q, %v", short.Name, ok)
			}
			if got.Family != want.family || got.VCPU != want.vcpu || got.MemoryGiB != want.mem ||
				got.GPUs != want.gpus || got.NetworkGbps != want.net || got.GPUMemoryGB != want.gpuMemGB {
				t.Errorf("got %s %d/%v/%d/%v %d GB, want %s %d/%v/%d/%v %d GB", got.Family, got.VCPU, got.MemoryGiB, got.GPUs, got.NetworkGbps, got.GPUMemoryGB,
					want.family, want.vcpu, want.mem, want.gpus, want.net, want.gpuMemGB)
			}
			fam := publishedFamilies[want.family]
			if got.GPU != fam.gpu || got.GPUModelStated != fam.stated || got.GPUMemoryMiB != fam.mib ||
				got.NVLink != fam.nvlink || got.ERI != fam.eri || got.BareMetal != fam.bareMetal || (got.RegionLimited != "") != fam.regional {
				t.Errorf("family fields: got gpu=%s stated=%v mib=%d nvlink=%v eri=%v bm=%v regional=%q, want %+v",
					got.GPU, got.GPUModelStated, got.GPUMemoryMiB, got.NVLink, got.ERI, got.BareMetal, got.RegionLimited, fam)
			}
			m, ok := modelByName(got.GPU)
			if !ok || m.MemoryGB != got.GPUMemoryGB {
				t.Errorf("GPU model %q memory %d GB does not match the type's %d GB", got.GPU, m.MemoryGB, got.GPUMemoryGB)
			}
			if !got.GPUModelStated && !strings.Contains(got.GPUVendorName, "not stated") {
				t.Errorf("GPUVendorName %q must say the model is not stated", got.GPUVendorName)
			}
			if got.Source == "" {
				t.Error("no source")
			}
		})
	}
	if n := len(GPUInstanceTypes()); n != len(publishedSizes) {
		t.Errorf("catalog has %d GPU types, SOURCES.md has %d", n, len(publishedSizes))
	}
}

func TestSpecialTypes(t *testing.T) {
	scc, _ := LookupInstanceType("sccgn7ex.32xlarge")
	if !scc.SCC || !scc.RequiresHPCCluster || scc.RoCEGbps != 800 || !scc.NVSwitch || scc.RDMA() != "roce" || !scc.BareMetal {
		t.Errorf("sccgn7ex: %+v", scc)
	}
	ex, _ := LookupInstanceType("ecs.ebmgn7ex.32xlarge")
	if ex.ERIQuantity != 2 || ex.ERIGbps != 160 || ex.RDMA() != "erdma" {
		t.Errorf("ebmgn7ex: %+v", ex)
	}
	for _, name := range []string{"gn8is.2xlarge", "gn8v.4xlarge", "ebmgn7ex.32xlarge", "ebmgn8v.48xlarge"} {
		ty, _ := LookupInstanceType(name)
		if ty.LocalNVMe != No || !ty.ElasticEphemeralDisk {
			t.Errorf("%s: LocalNVMe %q, ephemeral %v", name, ty.LocalNVMe, ty.ElasticEphemeralDisk)
		}
	}
	g, _ := LookupInstanceType("ecs.gn7e-c16g1.4xlarge")
	if g.LocalNVMe != Unknown {
		t.Errorf("gn7e local NVMe should be not stated, got %q", g.LocalNVMe)
	}
	big, _ := LookupInstanceType("gn8v-8x.48xlarge")
	if big.MaxDiskIOPS != 1_000_000 || big.MaxDiskMBps != 6000 {
		t.Errorf("gn8v-8x.48xlarge disk cap %d/%d", big.MaxDiskIOPS, big.MaxDiskMBps)
	}
	for _, name := range []string{"gn8is.2xlarge", "gn8v-8x.48xlarge", "ebmgn8v.48xlarge"} {
		ty, _ := LookupInstanceType(name)
		if !strings.Contains(ty.RegionLimited, "contact Alibaba Cloud sales") || !strings.Contains(ty.RegionLimited, "https://") {
			t.Errorf("%s: RegionLimited %q should quote the vendor and cite its page", name, ty.RegionLimited)
		}
	}
	s, _ := LookupInstanceType("GN7S-C8G1.2XLARGE")
	if s.AvailabilityNote == "" {
		t.Error("gn7s should carry its by-ticket note")
	}
}

func TestCPUTypes(t *testing.T) {
	want := map[string][2]float64{"ecs.g7.xlarge": {4, 16}, "ecs.g7.2xlarge": {8, 32}, "ecs.c7.xlarge": {4, 8}, "ecs.c7.2xlarge": {8, 16}}
	for name, w := range want {
		ty, ok := LookupInstanceType(name)
		if !ok || ty.IsGPU() || float64(ty.VCPU) != w[0] || ty.MemoryGiB != w[1] || ty.GPU != "" || ty.Source == "" {
			t.Errorf("%s: %+v", name, ty)
		}
	}
	for _, ty := range GPUInstanceTypes() {
		if ty.Family == "g7" || ty.Family == "c7" {
			t.Errorf("CPU type %s among GPU types", ty.Name)
		}
	}
	fs := Families()
	if len(fs) != len(publishedFamilies)+2 || fs[0] != "gn6i" || fs[len(fs)-1] != "c7" {
		t.Errorf("Families() = %v", fs)
	}
}

func TestParseInstanceTypeError(t *testing.T) {
	_, err := ParseInstanceType("ecs.gn7e-c16g1.2xlarge")
	if !errors.Is(err, ErrUnknownInstanceType) || !strings.Contains(err.Error(), "ecs.gn7e-c16g1.4xlarge") {
		t.Errorf("err = %v, want a list of gn7e sizes", err)
	}
	_, err = ParseInstanceType("ecs.p4d.24xlarge")
	if !errors.Is(err, ErrUnknownInstanceType) || !strings.Contains(err.Error(), "sccgn7ex") {
		t.Errorf("err = %v, want the known families", err)
	}
}

func TestCopiesAreIndependent(t *testing.T) {
	ms := GPUModels()
	ms[0].Aliases[0] = "changed"
	if slices.Contains(GPUModels()[0].Aliases, "changed") {
		t.Error("GPUModels shares its slices")
	}
	ss := Scenarios()
	ss[0].RecommendedModels[0] = "changed"
	if Scenarios()[0].RecommendedModels[0] == "changed" {
		t.Error("Scenarios shares its slices")
	}
}

func TestListings(t *testing.T) {
	if n := len(InstanceTypes()); n != len(publishedSizes)+4 {
		t.Errorf("InstanceTypes() has %d, want %d GPU + 4 CPU", n, len(publishedSizes))
	}
	if n := len(CPUInstanceTypes()); n != 4 {
		t.Errorf("CPUInstanceTypes() has %d", n)
	}
	ls := ESSDLevels()
	if len(ls) != 4 || ls[0].Name != "PL0" || ls[2].MinGiB != 461 || ls[3].MaxIOPS != 1_000_000 {
		t.Errorf("ESSDLevels() = %+v", ls)
	}
	ty, _ := LookupInstanceType("gn7e-c16g1.4xlarge")
	if m, ok := ty.Model(); !ok || m.Name != "A100-80GB" {
		t.Errorf("Model() = %v, %v", m.Name, ok)
	}
	cpu, _ := LookupInstanceType("g7.xlarge")
	if _, ok := cpu.Model(); ok {
		t.Error("CPU type has no GPU model")
	}
}

// Every whole HGX baseboard (8 A100- or Hopper-class SXM GPUs on NVLink) is an NVSwitch system,
// which needs Fabric Manager; no type with fewer GPUs, and no V100 type, is.
func TestNVSwitchTypes(t *testing.T) {
	want := []string{"ecs.ebmgn7e.32xlarge", "ecs.ebmgn7ex.32xlarge", "ecs.ebmgn8v.48xlarge", "ecs.gn7-c13g1.26xlarge",
		"ecs.gn7e-c16g1.32xlarge", "ecs.gn8v-8x.16xlarge", "ecs.gn8v-8x.48xlarge", "ecs.sccgn7ex.32xlarge"}
	var got []string
	for _, it := range InstanceTypes() {
		if it.NVSwitch {
			got = append(got, it.Name)
			if it.GPUs != 8 || !it.NVLink {
				t.Errorf("%s: NVSwitch with %d GPUs, NVLink %v", it.Name, it.GPUs, it.NVLink)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("NVSwitch types %v, want %v", got, want)
	}
}
