package ecs

import (
	"cmp"
	"strconv"
	"strings"
)

// This file holds the vendor's data ECS answers with. Every
// instance-type figure is the vendor's, as listed in internal/catalog/SOURCES.md
// section 1 (the same table internal/catalog carries, kept equal by
// TestCatalogMatchesProviderCatalog); where the vendor does not state a figure
// it is left zero/empty rather than invented. Prices are NOT vendor data: see
// gpuHourPrice.

type gpuFamily struct {
	Family    string  // without "ecs."
	GPUSpec   string  // as the vendor names it; "model not stated" where it does not
	GPUMemGiB float64 // per GPU, as DescribeInstanceTypes answers GPUMemorySize
	NVLink    bool
	Eri       int // ERIs per instance; 0 = no eRDMA
	Cards     int // network cards
	NeedsHpc  bool
	Ephemeral bool // supports elastic ephemeral disks (no local NVMe)
	Sizes     []gpuSize
}

type gpuSize struct {
	Name     string // full type, with "ecs."
	VCPU     int
	MemGiB   float64
	GPUs     int
	NetGbits float64
}

// instanceTypeInfo is one flattened type for lookups.
type instanceTypeInfo struct {
	gpuSize
	fam *gpuFamily
}

// gpuFamilies is SOURCES.md section 1. GPUMemGiB is the section's "GPU memory"
// per GPU (the catalog's GPUMemoryGB), the unit DescribeInstanceTypes answers
// GPUMemorySize in (GiB; see instance_types_api.go); every GPU family states it.
// EriQuantity: "yes" without a count is 1; ebmgn7ex states 2 ERIs on different
// network cards.
var gpuFamilies = []*gpuFamily{
	{Family: "gn6i", GPUSpec: "NVIDIA T4", GPUMemGiB: 16, Cards: 1, Sizes: sizes(
		"gn6i-c4g1.xlarge 4/15/1/4; gn6i-c8g1.2xlarge 8/31/1/5; gn6i-c16g1.4xlarge 16/62/1/6; gn6i-c24g1.6xlarge 24/93/1/7.5; gn6i-c40g1.10xlarge 40/155/1/10; gn6i-c24g1.12xlarge 48/186/2/15; gn6i-c24g1.24xlarge 96/372/4/30")},
	{Family: "gn6v", GPUSpec: "NVIDIA V100 SXM2", GPUMemGiB: 16, NVLink: true, Cards: 1, Sizes: sizes(
		"gn6v-c8g1.2xlarge 8/32/1/2.5; gn6v-c8g1.4xlarge 16/64/2/5; gn6v-c8g1.8xlarge 32/128/4/10; gn6v-c8g1.16xlarge 64/256/8/20; gn6v-c10g1.20xlarge 82/336/8/35")},
	{Family: "gn6e", GPUSpec: "NVIDIA V100 SXM2", GPUMemGiB: 32, NVLink: true, Cards: 1, Sizes: sizes(
		"gn6e-c12g1.3xlarge 12/92/1/5; gn6e-c12g1.6xlarge 24/184/2/8; gn6e-c12g1.12xlarge 48/368/4/16; gn6e-c12g1.24xlarge 96/736/8/32")},
	{Family: "gn7", GPUSpec: "model not stated (A100 40 GB class)", GPUMemGiB: 40, NVLink: true, Cards: 1, Sizes: sizes(
		"gn7-c12g1.3xlarge 12/94/1/4; gn7-c13g1.13xlarge 52/378/4/16; gn7-c13g1.26xlarge 104/756/8/30")},
	{Family: "gn7e", GPUSpec: "model not stated (A100 80 GB class)", GPUMemGiB: 80, NVLink: true, Cards: 1, Sizes: sizes(
		"gn7e-c16g1.4xlarge 16/125/1/8; gn7e-c16g1.8xlarge 32/250/2/16; gn7e-c16g1.16xlarge 64/500/4/32; gn7e-c16g1.32xlarge 128/1000/8/64")},
	{Family: "gn7i", GPUSpec: "NVIDIA A10", GPUMemGiB: 24, Cards: 1, Sizes: sizes(
		"gn7i-c8g1.2xlarge 8/30/1/16; gn7i-c16g1.4xlarge 16/60/1/16; gn7i-c32g1.8xlarge 32/188/1/16; gn7i-c32g1.16xlarge 64/376/2/32; gn7i-c32g1.32xlarge 128/752/4/64; gn7i-c48g1.12xlarge 48/310/1/16; gn7i-c56g1.14xlarge 56/346/1/16; " +
			"gn7i-2x.8xlarge 32/128/2/16; gn7i-4x.8xlarge 32/128/4/32; gn7i-4x.16xlarge 64/256/4/64; gn7i-8x.32xlarge 128/512/8/64; gn7i-8x.16xlarge 64/256/8/32")},
	{Family: "gn7s", GPUSpec: "NVIDIA A30", GPUMemGiB: 24, Cards: 1, Sizes: sizes(
		"gn7s-c8g1.2xlarge 8/60/1/16; gn7s-c16g1.4xlarge 16/120/1/16; gn7s-c32g1.8xlarge 32/250/1/16; gn7s-c32g1.16xlarge 64/500/2/32; gn7s-c32g1.32xlarge 128/1000/4/64; gn7s-c48g1.12xlarge 48/380/1/16; gn7s-c56g1.14xlarge 56/440/1/16")},
	{Family: "gn8is", GPUSpec: "NVIDIA L20", GPUMemGiB: 48, Eri: 1, Cards: 1, Ephemeral: true, Sizes: sizes(
		"gn8is.2xlarge 8/64/1/8; gn8is.4xlarge 16/128/1/16; gn8is-2x.8xlarge 32/256/2/32; gn8is-4x.16xlarge 64/512/4/64; gn8is-8x.32xlarge 128/1024/8/100")},
	{Family: "gn8v", GPUSpec: "model not stated (Hopper class, 96 GB HBM3)", GPUMemGiB: 96, NVLink: true, Eri: 1, Cards: 1, Ephemeral: true, Sizes: sizes(
		"gn8v.4xlarge 16/96/1/12; gn8v.6xlarge 24/128/1/15; gn8v-2x.8xlarge 32/192/2/20; gn8v-4x.8xlarge 32/384/4/20; gn8v-2x.12xlarge 48/256/2/25; gn8v-8x.16xlarge 64/768/8/32; gn8v-4x.24xlarge 96/512/4/50; gn8v-8x.48xlarge 192/1024/8/100")},
	{Family: "ebmgn7e", GPUSpec: "model not stated (A100 80 GB class, bare metal)", GPUMemGiB: 80, NVLink: true, Cards: 1, Sizes: sizes(
		"ebmgn7e.32xlarge 128/1024/8/64")},
	{Family: "ebmgn7ex", GPUSpec: "model not stated (A100 80 GB class, bare metal)", GPUMemGiB: 80, NVLink: true, Eri: 2, Cards: 2, Ephemeral: true, Sizes: sizes(
		"ebmgn7ex.32xlarge 128/1024/8/160")},
	{Family: "ebmgn8v", GPUSpec: "model not stated (Hopper class 96 GB, bare metal)", GPUMemGiB: 96, NVLink: true, Eri: 1, Cards: 1, Ephemeral: true, Sizes: sizes(
		"ebmgn8v.48xlarge 192/1024/8/170")},
	{Family: "sccgn7ex", GPUSpec: "model not stated (A100 80 GB class, super computing cluster)", GPUMemGiB: 80, NVLink: true, Cards: 1, NeedsHpc: true, Sizes: sizes(
		"sccgn7ex.32xlarge 128/1024/8/64")},
	{Family: "ebmgn7", GPUSpec: "model not stated (A100 40 GB class, bare metal)", GPUMemGiB: 40, Cards: 1, Sizes: sizes("ebmgn7.26xlarge 104/768/8/30")},
	{Family: "ebmgn7i", GPUSpec: "NVIDIA A10", GPUMemGiB: 24, Cards: 1, Sizes: sizes("ebmgn7i.32xlarge 128/768/4/64")},
	{Family: "ebmgn8ia", GPUSpec: "NVIDIA L20", GPUMemGiB: 48, Eri: 1, Cards: 1, Ephemeral: true, Sizes: sizes("ebmgn8ia.64xlarge 256/1536/4/160")},
	{Family: "ebmgn6e", GPUSpec: "NVIDIA V100 SXM2", GPUMemGiB: 32, NVLink: true, Cards: 1, Sizes: sizes("ebmgn6e.24xlarge 96/768/8/32")},
	{Family: "ebmgn6v", GPUSpec: "NVIDIA V100 SXM2", GPUMemGiB: 16, NVLink: true, Cards: 1, Sizes: sizes("ebmgn6v.24xlarge 96/384/8/30")},
	{Family: "ebmgn6i", GPUSpec: "NVIDIA T4", GPUMemGiB: 16, Cards: 1, Sizes: sizes("ebmgn6i.24xlarge 96/384/4/30")},
	{Family: "ebmgn8is", GPUSpec: "NVIDIA L20", GPUMemGiB: 48, Eri: 1, Cards: 1, Ephemeral: true, Sizes: sizes("ebmgn8is.32xlarge 128/1024/8/160")},
	// gn8v-tee: confidential computing on gn8v sizes; the vendor states no eRDMA and no NVLink
	// figure for it (its NVLink firewall blocks GPU-to-GPU memory access).
	{Family: "gn8v-tee", GPUSpec: "model not stated (Hopper class, 96 GB HBM3, TEE)", GPUMemGiB: 96, Cards: 1, Sizes: sizes(
		"gn8v-tee.4xlarge 16/96/1/12; gn8v-tee.6xlarge 24/128/1/15; gn8v-tee-8x.16xlarge 64/768/8/32; gn8v-tee-8x.48xlarge 192/1024/8/100")},
	// General-purpose CPU families for Kubernetes control planes: no GPU. Sizes from the vendor's
	// g7/c7 family pages; the vendor's bandwidth is not recorded, so it stays 0.
	{Family: "g7", Cards: 1, Sizes: sizes("g7.xlarge 4/16/0/0; g7.2xlarge 8/32/0/0")},
	{Family: "c7", Cards: 1, Sizes: sizes("c7.xlarge 4/8/0/0; c7.2xlarge 8/16/0/0")},
}

var instanceTypes = map[string]*instanceTypeInfo{}
var instanceTypeOrder []string

func init() {
	for _, f := range gpuFamilies {
		for _, sz := range f.Sizes {
			instanceTypes[sz.Name] = &instanceTypeInfo{gpuSize: sz, fam: f}
			instanceTypeOrder = append(instanceTypeOrder, sz.Name)
		}
	}
}

// sizes parses the SOURCES.md notation "name vcpu/ram/gpus/gbits; ...".
func sizes(spec string) []gpuSize {
	var out []gpuSize
	for _, part := range strings.Split(spec, ";") {
		fields := strings.Fields(part)
		if len(fields) != 2 {
			panic("bad size spec: " + part)
		}
		nums := strings.Split(fields[1], "/")
		if len(nums) != 4 {
			panic("bad size spec: " + part)
		}
		out = append(out, gpuSize{Name: "ecs." + fields[0], VCPU: atoiMust(nums[0]), MemGiB: atofMust(nums[1]),
			GPUs: atoiMust(nums[2]), NetGbits: atofMust(nums[3])})
	}
	return out
}

func normalizeType(t string) string {
	if t != "" && !strings.HasPrefix(t, "ecs.") {
		return "ecs." + t
	}
	return t
}

// familyOf is the InstanceTypeFamily of a type: its family's own name for a known type (a
// family name may hold a '-', as gn8v-tee does), else the name up to the first '-' or '.'.
func familyOf(t string) string {
	if info := instanceTypes[normalizeType(t)]; info != nil {
		return "ecs." + info.fam.Family
	}
	t = strings.TrimPrefix(t, "ecs.")
	if i := strings.IndexAny(t, "-."); i > 0 {
		return "ecs." + t[:i]
	}
	return "ecs." + t
}

// --- images ---

type imageInfo struct {
	ID, Name, OSName, Platform, Family string
	Size                               int
}

// publicImages are the public images the provider's examples and default node images name.
var publicImages = []imageInfo{
	{ID: "ubuntu_22_04_x64_20G_alibase_20240101.vhd", Name: "ubuntu_22_04_x64_20G_alibase_20240101.vhd", OSName: "Ubuntu  22.04 64位", Platform: "Ubuntu", Family: "acs:ubuntu_22_04_x64", Size: 20},
	{ID: "aliyun_3_x64_20G_alibase_20240101.vhd", Name: "aliyun_3_x64_20G_alibase_20240101.vhd", OSName: "Alibaba Cloud Linux  3.2104 LTS 64位", Platform: "Aliyun", Family: "acs:alibaba_cloud_linux_3_2104_lts_x64", Size: 20},
}

func findImage(id string) *imageInfo {
	for i := range publicImages {
		if publicImages[i].ID == id {
			return &publicImages[i]
		}
	}
	return nil
}

// --- prices ---

// gpuHourPrice is the EMULATOR'S OWN ILLUSTRATIVE price per GPU-hour (CNY)
// by family. These are not Alibaba Cloud prices and must never be read as
// such; they only give DescribePrice a deterministic, plausible ordering
// (newer/larger GPUs cost more). Price of a type per hour =
// GPUs*gpuHourPrice + vCPU*0.12 + GiB*0.02; spot = 30% of that.
var gpuHourPrice = map[string]float64{
	"ecs.gn6i": 6, "ecs.gn6v": 14, "ecs.gn6e": 18, "ecs.gn7": 24, "ecs.gn7e": 34, "ecs.gn7i": 9,
	"ecs.gn7s": 11, "ecs.gn8is": 16, "ecs.gn8v": 42, "ecs.ebmgn7e": 36, "ecs.ebmgn7ex": 38,
	"ecs.ebmgn8v": 45, "ecs.sccgn7ex": 40, "ecs.ebmgn7": 26, "ecs.ebmgn7i": 10, "ecs.ebmgn8ia": 17,
	"ecs.ebmgn6e": 19, "ecs.ebmgn6v": 15, "ecs.ebmgn6i": 7, "ecs.ebmgn8is": 17, "ecs.gn8v-tee": 44,
}

func hourPrice(t *instanceTypeInfo) float64 {
	p := float64(t.GPUs)*gpuHourPrice["ecs."+t.fam.Family] + float64(t.VCPU)*0.12 + t.MemGiB*0.02
	return roundCents(p)
}

// diskHourPrice is likewise illustrative: CNY per GiB-hour by category/level.
func diskHourPrice(category, pl string, size int) float64 {
	per := 0.001
	switch category {
	case "cloud_essd":
		per = map[string]float64{"PL0": 0.0007, "PL1": 0.0014, "PL2": 0.0028, "PL3": 0.0056}[strings.ToUpper(cmp.Or(pl, "PL1"))]
	case "cloud_auto":
		per = 0.0014
	case "elastic_ephemeral_disk_standard":
		per = 0.0004
	case "elastic_ephemeral_disk_premium":
		per = 0.0008
	}
	return roundCents(per * float64(size))
}

func roundCents(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// NormalizeType is an instance type's full name: the vendor accepts "gn7i-c8g1.2xlarge" for
// "ecs.gn7i-c8g1.2xlarge".
func NormalizeType(t string) string { return normalizeType(t) }

// KnownType says whether the catalog offers instance type t (full name or not).
func KnownType(t string) bool { return instanceTypes[normalizeType(t)] != nil }

func atoiMust(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func atofMust(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}
