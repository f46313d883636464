package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// This file holds the instance type table. GPU families and sizes come from
// the vendor's GPU instance family pages (SOURCES.md section 1, "GPU instance
// families"), the nvidia-smi MiB figures from the line below that table, local
// NVMe / elastic ephemeral disks and the gn8v-8x.48xlarge disk cap from
// SOURCES.md section 3. The general-purpose g7/c7 sizes for control planes are
// public sizes from the vendor's instance family page.

// InstanceType is one ECS instance type.
type InstanceType struct {
	// Name carries the "ecs." prefix, e.g. "ecs.gn7e-c16g1.4xlarge".
	Name   string
	Family string
	VCPU   int
	// MemoryGiB is instance RAM.
	MemoryGiB float64
	// GPUs is the GPU count (0 for CPU types).
	GPUs int
	// GPU is the catalog GPU model key (see GPUModels); "" for CPU types.
	GPU string
	// GPUVendorName is the GPU as the vendor names it, e.g.
	// "model not stated (A100 80 GB class)".
	GPUVendorName string
	// GPUModelStated is false where the vendor does not name the GPU model;
	// GPU is then the datasheet model of the same class, used as an estimate.
	GPUModelStated bool
	// GPUMemoryGB is memory per GPU; GPUMemoryMiB is what nvidia-smi reports
	// per GPU where the vendor gives it, else 0 (not stated).
	GPUMemoryGB  int
	GPUMemoryMiB int
	// NVLink between the GPUs of the node; NVSwitch for an NVSwitch fabric.
	// NVLinkGBs is the vendor-stated NVLink bandwidth, 0 when not stated.
	NVLink    bool
	NVSwitch  bool
	NVLinkGBs float64
	// ERI: elastic RDMA interfaces (eRDMA over the VPC) supported.
	// ERIQuantity is the stated number of ERIs (0 when supported but the count
	// is not stated); ERIGbps the stated eRDMA bandwidth (0 when not stated).
	ERI         bool
	ERIQuantity int
	ERIGbps     float64
	// NetworkGbps is the baseline VPC network bandwidth; 0 when not stated.
	NetworkGbps float64
	// BareMetal: ebm* families and SCC families (the vendor builds SCC on ECS
	// Bare Metal). SCC: super computing cluster family with RoCE.
	BareMetal bool
	SCC       bool
	// RoCEGbps is the RoCE RDMA bandwidth of SCC types; GPUDirect RDMA with it.
	RoCEGbps  int
	GPUDirect bool
	// RequiresHPCCluster: RunInstances needs an HpcClusterId.
	RequiresHPCCluster bool
	// LocalNVMe: No for the families the vendor says have none, Unknown where
	// the vendor is silent. ElasticEphemeralDisk: supports
	// elastic_ephemeral_disk_standard|premium (64-8,192 GiB).
	LocalNVMe            Tristate
	ElasticEphemeralDisk bool
	// MaxDiskIOPS / MaxDiskMBps cap total disk performance; 0 when not stated.
	MaxDiskIOPS int
	MaxDiskMBps int
	// AvailabilityNote is set where the vendor restricts the family
	// (e.g. "by ticket, not recommended").
	AvailabilityNote string
	// ConfidentialComputing is set on the heterogeneous confidential computing
	// family (gn8v-tee): TDX on the CPU with the GPU inside the trusted
	// execution environment. It is a special-purpose family: selection ranks it
	// after the general-purpose families whenever the scenario figures tie.
	ConfidentialComputing bool
	// RegionLimited holds the vendor's words where it sells the family only
	// in some regions (through sales); "" where the vendor states no limit.
	// It is information for the user, not a ranking key: whether a region
	// sells a type is what DescribeAvailableResource answers.
	RegionLimited string
	Notes         string
	Source        string
}

// IsGPU reports whether the type has GPUs.
func (t InstanceType) IsGPU() bool { return t.GPUs > 0 }

// RDMA reports the kind of RDMA the type offers between nodes: "erdma"
// (elastic RDMA interfaces over the VPC; enable with a HighPerformance ENI),
// "roce" (SCC RoCE inside an HPC cluster) or "" (none).
func (t InstanceType) RDMA() string {
	switch {
	case t.ERI:
		return "erdma"
	case t.RoCEGbps > 0:
		return "roce"
	}
	return ""
}

// Model returns the catalog GPU model of the type; false for CPU types.
func (t InstanceType) Model() (GPUModel, bool) {
	m, ok := modelByName(t.GPU)
	if !ok {
		return GPUModel{}, false
	}
	return cloneModel(m), true
}

// ShortName is Name without the "ecs." prefix.
func (t InstanceType) ShortName() string { return strings.TrimPrefix(t.Name, "ecs.") }

// family is the shared part of a family row; sizes are in the notation of
// SOURCES.md section 1, "name vCPU/RAM/GPUs/Gbit/s".
type family struct {
	t     InstanceType // template: every field but the per-size ones
	sizes string
	// hgx8 marks a family whose 8-GPU sizes are a whole NVIDIA HGX baseboard: 8 SXM GPUs of the
	// A100 or Hopper class connected all-to-all by NVLink (600 GB/s for A100, 900 GB/s for
	// Hopper). NVIDIA builds those baseboards with NVSwitches (Fabric Manager user guide, "GPU
	// Baseboard Topologies": the HGX A100 and HGX H100 baseboards,
	// https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html), so those
	// sizes get NVSwitch: Fabric Manager must run on them or CUDA fails. The vendor does not name
	// the switch on its family pages; smaller sizes hold part of a baseboard without its switches
	// (the vendor passes through GPUs, not NVSwitches, to them). Not set: the V100 SXM2 families
	// (NVLink hybrid cube mesh, no NVSwitch), ebmgn7 (NVLink not stated) and gn8v-tee (the
	// confidential computing setup manages the fabric itself).
	hgx8 bool
}

// Vendor pages the Source fields cite; SOURCES.md lists every page the catalog uses.
const (
	urlGPUFamilies = "https://www.alibabacloud.com/help/en/ecs/user-guide/gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1"
	urlSCC         = "https://www.alibabacloud.com/help/en/ecs/user-guide/scc-overview"
	urlCPUFamilies = "https://www.alibabacloud.com/help/en/ecs/user-guide/overview-of-instance-families"
	urlEphemeral   = "https://www.alibabacloud.com/help/en/ecs/user-guide/elastic-ephemeral-disks"
	urlTEE         = "https://www.alibabacloud.com/help/en/ecs/user-guide/build-a-heterogeneous-confidential-computing-environment"
	urlGPUERDMA    = "https://www.alibabacloud.com/help/en/ecs/user-guide/on-the-gpu-instance-configuration-erdma"
	urlNVIDIA      = "https://www.nvidia.com/en-us/data-center/"
)

const (
	srcGPUFamilies = "Alibaba Cloud GPU instance family documentation (" + urlGPUFamilies + ")"
	srcCPUFamilies = "Alibaba Cloud general-purpose instance family page, g7 / c7 (" + urlCPUFamilies + ")"
	notStatedNVMe  = "no local NVMe; supports elastic ephemeral disks (" + urlEphemeral + ")"
	// srcSCC: the SCC page says SCC adds RDMA (RoCE) to ECS Bare Metal
	// ("在弹性裸金属服务器基础上" in its Chinese edition) and lists sccgn7ex.
	srcSCC = "Alibaba Cloud Super Computing Cluster instance families, sccgn7ex; SCC is built on ECS Bare Metal (" + urlSCC + ")"
	// regionLimitedSales is the vendor's wording on the gn8v, gn8is and
	// ebmgn8v sections of the GPU family page.
	regionLimitedSales = "available only in specific regions, including regions outside China; to use the instance family, contact Alibaba Cloud sales (" + urlGPUFamilies + ")"
)

// families is the single table of instance families, in the order of SOURCES.md section 1.
var families = []family{
	{t: InstanceType{Family: "gn6i", GPU: "T4", GPUVendorName: "NVIDIA T4", GPUModelStated: true, GPUMemoryGB: 16, GPUMemoryMiB: 15109, LocalNVMe: Unknown},
		sizes: "gn6i-c4g1.xlarge 4/15/1/4; gn6i-c8g1.2xlarge 8/31/1/5; gn6i-c16g1.4xlarge 16/62/1/6; gn6i-c24g1.6xlarge 24/93/1/7.5; gn6i-c40g1.10xlarge 40/155/1/10; gn6i-c24g1.12xlarge 48/186/2/15; gn6i-c24g1.24xlarge 96/372/4/30"},
	{t: InstanceType{Family: "gn6v", GPU: "V100-16GB", GPUVendorName: "NVIDIA V100 SXM2", GPUModelStated: true, GPUMemoryGB: 16, GPUMemoryMiB: 16160, NVLink: true, LocalNVMe: Unknown},
		sizes: "gn6v-c8g1.2xlarge 8/32/1/2.5; gn6v-c8g1.4xlarge 16/64/2/5; gn6v-c8g1.8xlarge 32/128/4/10; gn6v-c8g1.16xlarge 64/256/8/20; gn6v-c10g1.20xlarge 82/336/8/35"},
	{t: InstanceType{Family: "gn6e", GPU: "V100-32GB", GPUVendorName: "NVIDIA V100 SXM2", GPUModelStated: true, GPUMemoryGB: 32, GPUMemoryMiB: 32510, NVLink: true, LocalNVMe: Unknown},
		sizes: "gn6e-c12g1.3xlarge 12/92/1/5; gn6e-c12g1.6xlarge 24/184/2/8; gn6e-c12g1.12xlarge 48/368/4/16; gn6e-c12g1.24xlarge 96/736/8/32"},
	{t: InstanceType{Family: "gn7", GPU: "A100-40GB", GPUVendorName: "model not stated (A100 40 GB class)", GPUMemoryGB: 40, GPUMemoryMiB: 40537, NVLink: true, LocalNVMe: Unknown},
		sizes: "gn7-c12g1.3xlarge 12/94/1/4; gn7-c13g1.13xlarge 52/378/4/16; gn7-c13g1.26xlarge 104/756/8/30", hgx8: true},
	{t: InstanceType{Family: "gn7e", GPU: "A100-80GB", GPUVendorName: "model not stated (A100 80 GB class)", GPUMemoryGB: 80, GPUMemoryMiB: 81251, NVLink: true, LocalNVMe: Unknown,
		Notes: "NVLink required for heavy training (vendor)."},
		sizes: "gn7e-c16g1.4xlarge 16/125/1/8; gn7e-c16g1.8xlarge 32/250/2/16; gn7e-c16g1.16xlarge 64/500/4/32; gn7e-c16g1.32xlarge 128/1000/8/64", hgx8: true},
	{t: InstanceType{Family: "gn7i", GPU: "A10", GPUVendorName: "NVIDIA A10", GPUModelStated: true, GPUMemoryGB: 24, GPUMemoryMiB: 22731, LocalNVMe: Unknown},
		// All 12 sizes of the vendor's gn7i table, including the 2x/4x/8x sizes
		// (up to 8 x A10); the vendor says those five can only be changed to
		// gn7i-c8g1.2xlarge or gn7i-c16g1.4xlarge.
		sizes: "gn7i-c8g1.2xlarge 8/30/1/16; gn7i-c16g1.4xlarge 16/60/1/16; gn7i-c32g1.8xlarge 32/188/1/16; gn7i-c32g1.16xlarge 64/376/2/32; gn7i-c32g1.32xlarge 128/752/4/64; gn7i-c48g1.12xlarge 48/310/1/16; gn7i-c56g1.14xlarge 56/346/1/16; " +
			"gn7i-2x.8xlarge 32/128/2/16; gn7i-4x.8xlarge 32/128/4/32; gn7i-4x.16xlarge 64/256/4/64; gn7i-8x.32xlarge 128/512/8/64; gn7i-8x.16xlarge 64/256/8/32"},
	{t: InstanceType{Family: "gn7s", GPU: "A30", GPUVendorName: "NVIDIA A30", GPUModelStated: true, GPUMemoryGB: 24, LocalNVMe: Unknown,
		AvailabilityNote: "by ticket, not recommended"},
		sizes: "gn7s-c8g1.2xlarge 8/60/1/16; gn7s-c16g1.4xlarge 16/120/1/16; gn7s-c32g1.8xlarge 32/250/1/16; gn7s-c32g1.16xlarge 64/500/2/32; gn7s-c32g1.32xlarge 128/1000/4/64; gn7s-c48g1.12xlarge 48/380/1/16; gn7s-c56g1.14xlarge 56/440/1/16"},
	{t: InstanceType{Family: "gn8is", GPU: "L20", GPUVendorName: "NVIDIA L20", GPUModelStated: true, GPUMemoryGB: 48, ERI: true, LocalNVMe: No, ElasticEphemeralDisk: true,
		RegionLimited: regionLimitedSales,
		Notes:         "No NVLink: GPUs talk over PCIe Gen4. " + notStatedNVMe},
		sizes: "gn8is.2xlarge 8/64/1/8; gn8is.4xlarge 16/128/1/16; gn8is-2x.8xlarge 32/256/2/32; gn8is-4x.16xlarge 64/512/4/64; gn8is-8x.32xlarge 128/1024/8/100"},
	{t: InstanceType{Family: "gn8v", GPU: "Hopper-96GB", GPUVendorName: "model not stated (Hopper class, 96 GB HBM3, 4 TB/s, 39.5 TFLOPS FP32)", GPUMemoryGB: 96, NVLink: true, NVLinkGBs: 900, ERI: true, LocalNVMe: No, ElasticEphemeralDisk: true,
		RegionLimited: regionLimitedSales,
		Notes:         notStatedNVMe},
		sizes: "gn8v.4xlarge 16/96/1/12; gn8v.6xlarge 24/128/1/15; gn8v-2x.8xlarge 32/192/2/20; gn8v-4x.8xlarge 32/384/4/20; gn8v-2x.12xlarge 48/256/2/25; gn8v-8x.16xlarge 64/768/8/32; gn8v-4x.24xlarge 96/512/4/50; gn8v-8x.48xlarge 192/1024/8/100", hgx8: true},
	{t: InstanceType{Family: "ebmgn7e", GPU: "A100-80GB", GPUVendorName: "A100 80 GB class, bare metal, MIG (model not stated)", GPUMemoryGB: 80, NVLink: true, BareMetal: true, LocalNVMe: Unknown,
		Notes: "Bare metal; MIG supported (vendor)."},
		sizes: "ebmgn7e.32xlarge 128/1024/8/64", hgx8: true},
	{t: InstanceType{Family: "ebmgn7ex", GPU: "A100-80GB", GPUVendorName: "A100 80 GB class, bare metal (model not stated)", GPUMemoryGB: 80, NVLink: true, ERI: true, ERIQuantity: 2, ERIGbps: 160, BareMetal: true, LocalNVMe: No, ElasticEphemeralDisk: true,
		Notes: "Bare metal; 2 ERIs on different network cards, 160 Gbit/s eRDMA. " + notStatedNVMe},
		sizes: "ebmgn7ex.32xlarge 128/1024/8/160", hgx8: true},
	{t: InstanceType{Family: "ebmgn8v", GPU: "Hopper-96GB", GPUVendorName: "Hopper class 96 GB, bare metal (model not stated)", GPUMemoryGB: 96, NVLink: true, NVLinkGBs: 900, ERI: true, ERIGbps: 160, BareMetal: true, LocalNVMe: No, ElasticEphemeralDisk: true,
		RegionLimited: regionLimitedSales,
		Notes:         "Bare metal; 160 Gbit/s eRDMA. " + notStatedNVMe},
		sizes: "ebmgn8v.48xlarge 192/1024/8/170", hgx8: true},
	{t: InstanceType{Family: "sccgn7ex", GPU: "A100-80GB", GPUVendorName: "A100 80 GB class, super computing cluster (model not stated)", GPUMemoryGB: 80, NVLink: true, NVSwitch: true, SCC: true, BareMetal: true, RoCEGbps: 800, GPUDirect: true, RequiresHPCCluster: true, LocalNVMe: Unknown,
		Source: srcSCC,
		Notes:  "Bare metal: the vendor builds SCC on ECS Bare Metal and adds RDMA. NVSwitch; RoCE 800 Gbit/s (4 x dual-port 100G) with GPUDirect; RunInstances needs HpcClusterId."},
		sizes: "sccgn7ex.32xlarge 128/1024/8/64", hgx8: true},
	// gn8v-tee: the heterogeneous confidential computing family, gn8v sizes
	// with the GPU inside a TDX trusted execution environment (the sizes are on
	// the GPU family page; what the family is, on the vendor's confidential
	// computing page). The vendor states no eRDMA for it, and its NVLink
	// firewall keeps GPUs from reading each other's memory, so the catalog
	// records neither eRDMA nor an NVLink figure. Selection ranks it after
	// gn8v whenever the scenario figures tie (ConfidentialComputing).
	{t: InstanceType{Family: "gn8v-tee", GPU: "Hopper-96GB", GPUVendorName: "model not stated (Hopper class, 96 GB HBM3), in a trusted execution environment", GPUMemoryGB: 96, LocalNVMe: Unknown,
		ConfidentialComputing: true,
		Notes: "Confidential computing: Intel TDX on the CPU with the GPU inside the trusted execution environment; an NVLink firewall blocks GPUs from " +
			"reading each other's memory; eRDMA not stated (" + urlTEE + ")."},
		sizes: "gn8v-tee.4xlarge 16/96/1/12; gn8v-tee.6xlarge 24/128/1/15; gn8v-tee-8x.16xlarge 64/768/8/32; gn8v-tee-8x.48xlarge 192/1024/8/100"},
	// Bare-metal families from the "ECS Bare Metal Instance families" part of the
	// same vendor page, one size each. Each has more vCPUs or memory than the
	// virtualised size with the same GPU and count, or the same and ranks after
	// it (virtualised first on a tie), so no pick changes.
	{t: InstanceType{Family: "ebmgn8is", GPU: "L20", GPUVendorName: "NVIDIA L20", GPUModelStated: true, GPUMemoryGB: 48, ERI: true, BareMetal: true, LocalNVMe: No, ElasticEphemeralDisk: true,
		RegionLimited: regionLimitedSales,
		Notes:         "Bare metal; 8 x L20 over PCIe Gen4; eRDMA (the vendor's eRDMA guide for GPU instances uses ebmgn8is as its example, " + urlGPUERDMA + "). " + notStatedNVMe},
		sizes: "ebmgn8is.32xlarge 128/1024/8/160"},
	{t: InstanceType{Family: "ebmgn7", GPU: "A100-40GB", GPUVendorName: "A100 40 GB class, bare metal, MIG (model not stated)", GPUMemoryGB: 40, BareMetal: true, LocalNVMe: Unknown,
		Notes: "Bare metal; MIG supported (vendor). NVLink between the GPUs is not stated by the vendor."},
		sizes: "ebmgn7.26xlarge 104/768/8/30"},
	{t: InstanceType{Family: "ebmgn7i", GPU: "A10", GPUVendorName: "NVIDIA A10", GPUModelStated: true, GPUMemoryGB: 24, BareMetal: true, LocalNVMe: Unknown,
		Notes: "Bare metal."},
		sizes: "ebmgn7i.32xlarge 128/768/4/64"},
	{t: InstanceType{Family: "ebmgn8ia", GPU: "L20", GPUVendorName: "NVIDIA L20", GPUModelStated: true, GPUMemoryGB: 48, ERI: true, ERIGbps: 160, BareMetal: true, LocalNVMe: No, ElasticEphemeralDisk: true,
		RegionLimited: regionLimitedSales,
		Notes:         "Bare metal; 4 GPUs and 256 vCPUs (64 vCPUs per GPU); eRDMA up to 160 Gbit/s; GPUs over PCIe Gen4. " + notStatedNVMe},
		sizes: "ebmgn8ia.64xlarge 256/1536/4/160"},
	{t: InstanceType{Family: "ebmgn6e", GPU: "V100-32GB", GPUVendorName: "NVIDIA V100 SXM2", GPUModelStated: true, GPUMemoryGB: 32, NVLink: true, BareMetal: true, LocalNVMe: Unknown,
		Notes: "Bare metal."},
		sizes: "ebmgn6e.24xlarge 96/768/8/32"},
	{t: InstanceType{Family: "ebmgn6v", GPU: "V100-16GB", GPUVendorName: "NVIDIA V100 SXM2", GPUModelStated: true, GPUMemoryGB: 16, NVLink: true, BareMetal: true, LocalNVMe: Unknown,
		Notes: "Bare metal."},
		sizes: "ebmgn6v.24xlarge 96/384/8/30"},
	{t: InstanceType{Family: "ebmgn6i", GPU: "T4", GPUVendorName: "NVIDIA T4", GPUModelStated: true, GPUMemoryGB: 16, BareMetal: true, LocalNVMe: Unknown,
		Notes: "Bare metal."},
		sizes: "ebmgn6i.24xlarge 96/384/4/30"},
	// Control-plane CPU types. Network bandwidth is left 0 (not stated by the vendor).
	{t: InstanceType{Family: "g7", LocalNVMe: Unknown, Source: srcCPUFamilies, Notes: "General-purpose, no GPU (control planes)."},
		sizes: "g7.xlarge 4/16/0/0; g7.2xlarge 8/32/0/0"},
	{t: InstanceType{Family: "c7", LocalNVMe: Unknown, Source: srcCPUFamilies, Notes: "Compute-optimised, no GPU (control planes)."},
		sizes: "c7.xlarge 4/8/0/0; c7.2xlarge 8/16/0/0"},
}

// gn8v-8x.48xlarge disk cap (SOURCES.md section 3).
var diskCaps = map[string][2]int{"ecs.gn8v-8x.48xlarge": {1_000_000, 6_000}}

var (
	instanceTypes []InstanceType
	typeIndex     = map[string]int{}
	familyNames   []string
)

func init() {
	for _, f := range families {
		familyNames = append(familyNames, f.t.Family)
		for _, sz := range strings.Split(f.sizes, ";") {
			t, err := parseSize(f.t, strings.TrimSpace(sz))
			if err != nil {
				panic(err) // table error: caught by every test run
			}
			if f.hgx8 && t.GPUs == 8 {
				t.NVSwitch = true
			}
			instanceTypes = append(instanceTypes, t)
			typeIndex[t.Name] = len(instanceTypes) - 1
		}
	}
}

// parseSize expands "gn6i-c4g1.xlarge 4/15/1/4" on the family template.
func parseSize(tmpl InstanceType, s string) (InstanceType, error) {
	name, spec, ok := strings.Cut(s, " ")
	parts := strings.Split(spec, "/")
	if !ok || len(parts) != 4 {
		return InstanceType{}, fmt.Errorf("catalog: bad size %q", s)
	}
	var n [4]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return InstanceType{}, fmt.Errorf("catalog: bad size %q: %v", s, err)
		}
		n[i] = v
	}
	t := tmpl
	t.Name = "ecs." + name
	t.VCPU, t.MemoryGiB, t.GPUs, t.NetworkGbps = int(n[0]), n[1], int(n[2]), n[3]
	if t.Source == "" {
		t.Source = srcGPUFamilies
	}
	if c, ok := diskCaps[t.Name]; ok {
		t.MaxDiskIOPS, t.MaxDiskMBps = c[0], c[1]
	}
	if !strings.HasPrefix(name, t.Family) {
		return InstanceType{}, fmt.Errorf("catalog: size %q outside family %s", s, t.Family)
	}
	return t, nil
}
