package catalog

// This file holds the GPU model table. Every figure comes from NVIDIA's
// datasheets (except the FP64 figures of A40, A10 and T4, which are derived
// from FP32 and say how in FP64Derived) (SOURCES.md section 1, "NVIDIA datasheet figures") or, for the
// Hopper-class part offered by gn8v, from the vendor's gn8v family figures in
// the same section. Figures the vendor does not publish are listed in
// GPUModel.Unstated and hold 0; they are unknown, not zero.

// Tristate is a yes / no / not-stated answer.
type Tristate string

// Tristate values.
const (
	Unknown Tristate = "not stated"
	Yes     Tristate = "yes"
	No      Tristate = "no"
)

// Names of figures that GPUModel.Unstated may list.
const (
	FigureMemoryBandwidth = "memory_bandwidth_gbs"
	FigureFP64            = "fp64_tflops"
	FigureFP32            = "fp32_tflops"
	FigureTensorFP16      = "tensor_fp16_tflops"
	FigureLink            = "gpu_link_gbs"
	FigureECC             = "ecc"
)

// GPUModel is one GPU model with its datasheet figures.
type GPUModel struct {
	// Name is the catalog key, e.g. "A100-80GB".
	Name string
	// Aliases are further accepted spellings; ParseGPUModel matches them
	// case-insensitively and ignores spaces, '-' and '_'.
	Aliases []string
	// Series groups memory variants ("A100", "V100", "Hopper").
	Series string
	// Architecture is NVIDIA's architecture name (Volta, Turing, Ampere, Ada
	// Lovelace, Hopper).
	Architecture string
	// Rank is the catalog's order of models (1 first). Selection uses it only
	// to break ties after every scenario requirement and every sourced figure
	// it ranks on (see Select); it is a catalog decision, not a vendor figure.
	// Hopper-96GB comes after A100-80GB: its vendor publishes no throughput.
	Rank int
	// MemoryGB is memory per GPU in GB; MemoryType is e.g. "HBM2e".
	MemoryGB   int
	MemoryType string
	// MemoryBandwidthGBs is memory bandwidth per GPU in GB/s.
	MemoryBandwidthGBs float64
	// FP64TFLOPS, FP32TFLOPS, TensorFP16TFLOPS are dense datasheet figures;
	// 0 when not applicable (FP64NotApplicable) or not stated (see Unstated).
	FP64TFLOPS       float64
	FP32TFLOPS       float64
	TensorFP16TFLOPS float64
	// FP64NotApplicable is true where the datasheet says "n/a" for FP64.
	FP64NotApplicable bool
	// FP64Derived says how FP64TFLOPS was derived where NVIDIA publishes no
	// FP64 figure for the part; "" where the figure is NVIDIA's own.
	FP64Derived string
	// LinkGBs is the GPU-GPU bandwidth per GPU in GB/s and Link describes it
	// ("NVLink", "NVLink bridge", "PCIe Gen4", "none").
	LinkGBs float64
	Link    string
	// ECC: Yes where NVIDIA states ECC memory for the model (A40), else
	// Unknown: the figures used for the other models do not state it.
	ECC Tristate
	// Offered is false for models no Alibaba family offers by name (H100,
	// A40, V100S); those are served by substitutes, see MapGPUModel.
	Offered bool
	// Unstated lists the figures (Figure* constants) the vendor does not publish.
	Unstated []string
	// Notes carries qualifications from the datasheet table.
	Notes string
	// Source names where the figures come from.
	Source string
}

// Stated reports whether the figure (a Figure* constant) is published.
func (m GPUModel) Stated(figure string) bool {
	for _, u := range m.Unstated {
		if u == figure {
			return false
		}
	}
	return true
}

const (
	srcDatasheet = "NVIDIA datasheet (" + urlNVIDIA + ")"
	// srcDerivedFP64 is the Source of the models whose FP64 figure is derived.
	srcDerivedFP64 = srcDatasheet + "; FP64 is not an NVIDIA figure, see FP64Derived"
	urlA40         = "https://www.nvidia.com/en-us/data-center/a40/"
	urlA40Sheet    = "https://images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf"
	srcFamily      = "Alibaba Cloud gn8v family figures (" + urlGPUFamilies + "); the vendor does not name the model"
)

// gpuModels is the single table of GPU models, in Rank order.
var gpuModels = []GPUModel{
	{
		Name: "H100", Aliases: []string{"H100-SXM", "H100-SXM5", "H100-80GB", "H100SXM5-80GB"},
		Series: "H100", Architecture: "Hopper", Rank: 1,
		MemoryGB: 80, MemoryType: "HBM3", MemoryBandwidthGBs: 3350,
		FP64TFLOPS: 34, FP32TFLOPS: 67, TensorFP16TFLOPS: 989,
		LinkGBs: 900, Link: "NVLink",
		ECC: Unknown, Unstated: []string{FigureECC},
		Notes:  "H100 SXM5 figures; FP64 tensor 67 TFLOPS. H100 PCIe: 80 GB HBM2e 2.0 TB/s, FP64 26, FP32 51, FP16 tensor 756, bridge 600 GB/s. No Alibaba family offers H100 by name.",
		Source: srcDatasheet,
	},
	{
		Name: "A100-80GB", Aliases: []string{"A100", "A100-80", "A100-80G", "A100-SXM4-80GB"},
		Series: "A100", Architecture: "Ampere", Rank: 2,
		MemoryGB: 80, MemoryType: "HBM2e", MemoryBandwidthGBs: 2039,
		FP64TFLOPS: 9.7, FP32TFLOPS: 19.5, TensorFP16TFLOPS: 312,
		LinkGBs: 600, Link: "NVLink",
		ECC: Unknown, Offered: true, Unstated: []string{FigureECC},
		Notes:  "A100 80GB SXM4. Alibaba's A100-class families never name the model.",
		Source: srcDatasheet,
	},
	{
		Name: "Hopper-96GB", Aliases: []string{"Hopper", "Hopper96", "Hopper-class", "Hopper-class-96GB"},
		Series: "Hopper", Architecture: "Hopper", Rank: 3,
		MemoryGB: 96, MemoryType: "HBM3", MemoryBandwidthGBs: 4000,
		FP32TFLOPS: 39.5,
		LinkGBs:    900, Link: "NVLink",
		ECC: Unknown, Offered: true,
		Unstated: []string{FigureFP64, FigureTensorFP16, FigureECC},
		Notes: "Hopper-class 96 GB HBM3 GPU as offered by gn8v / ebmgn8v. The vendor does not name the model and publishes no tensor (FP16/BF16) " +
			"or FP64 throughput; it positions gn8v for large language model inference and small and medium-scale training. " +
			"The catalog ranks it on the figures the vendor publishes (memory, memory bandwidth, NVLink) and never on throughput, " +
			"so for training it ranks after A100 80GB, whose tensor throughput NVIDIA publishes.",
		Source: srcFamily,
	},
	{
		Name: "A100-40GB", Aliases: []string{"A100-40", "A100-40G", "A100-SXM4-40GB"},
		Series: "A100", Architecture: "Ampere", Rank: 4,
		MemoryGB: 40, MemoryType: "HBM2", MemoryBandwidthGBs: 1555,
		FP64TFLOPS: 9.7, FP32TFLOPS: 19.5, TensorFP16TFLOPS: 312,
		LinkGBs: 600, Link: "NVLink",
		ECC: Unknown, Offered: true, Unstated: []string{FigureECC},
		Notes:  "A100 40GB SXM4; FP64 tensor 19.5 TFLOPS. Alibaba's A100-class families never name the model.",
		Source: srcDatasheet,
	},
	{
		Name: "L20", Aliases: []string{"L20-48GB"},
		Series: "L20", Architecture: "Ada Lovelace", Rank: 5,
		MemoryGB: 48, MemoryType: "GDDR6", MemoryBandwidthGBs: 864,
		FP64NotApplicable: true, FP32TFLOPS: 59.3, TensorFP16TFLOPS: 119,
		LinkGBs: 64, Link: "PCIe Gen4",
		ECC: Unknown, Offered: true, Unstated: []string{FigureECC},
		Notes:  "FP64 n/a in the datasheet; GPU-GPU traffic over PCIe Gen4 (64 GB/s).",
		Source: srcDatasheet,
	},
	{
		Name: "A40", Aliases: []string{"A40-48GB"},
		Series: "A40", Architecture: "Ampere", Rank: 6,
		MemoryGB: 48, MemoryType: "GDDR6", MemoryBandwidthGBs: 696,
		FP64TFLOPS: 0.59, FP32TFLOPS: 37.4, TensorFP16TFLOPS: 149.7,
		FP64Derived: "~0.59 = FP32 37.4 TFLOPS / 64 (an FP64:FP32 rate of 1:64); NVIDIA publishes no FP64 figure for A40",
		LinkGBs:     112.5, Link: "NVLink bridge",
		ECC:    Yes,
		Notes:  "FP64 ~0.59 TFLOPS is derived, not an NVIDIA figure (see FP64Derived). ECC: NVIDIA states \"48 GB GDDR6 with error-correcting code (ECC)\" (" + urlA40 + ", " + urlA40Sheet + "). No Alibaba family offers A40.",
		Source: srcDerivedFP64,
	},
	{
		Name: "A10", Aliases: []string{"A10-24GB"},
		Series: "A10", Architecture: "Ampere", Rank: 7,
		MemoryGB: 24, MemoryType: "GDDR6", MemoryBandwidthGBs: 600,
		FP64TFLOPS: 0.98, FP32TFLOPS: 31.2, TensorFP16TFLOPS: 125,
		FP64Derived: "~0.98 = FP32 31.2 TFLOPS / 32 (an FP64:FP32 rate of 1:32); NVIDIA publishes no FP64 figure for A10. A40 uses the same GA102 die and its figure is derived at 1:64, which would give ~0.49: read 0.98 as an upper bound",
		Link:        "none",
		ECC:         Unknown, Offered: true, Unstated: []string{FigureECC},
		Notes:  "FP64 ~0.98 TFLOPS is derived, not an NVIDIA figure (see FP64Derived); no GPU-GPU link.",
		Source: srcDerivedFP64,
	},
	{
		Name: "A30", Aliases: []string{"A30-24GB"},
		Series: "A30", Architecture: "Ampere", Rank: 8,
		MemoryGB: 24,
		ECC:      Unknown, Offered: true,
		Unstated: []string{FigureMemoryBandwidth, FigureFP64, FigureFP32, FigureTensorFP16, FigureLink, FigureECC},
		Notes:    "Offered by gn7s by ticket and not recommended by the vendor. The vendor states only its 24 GB memory; other figures are not stated.",
		Source:   "Alibaba Cloud gn7s family figures (" + urlGPUFamilies + ")",
	},
	{
		Name: "V100S", Aliases: []string{"V100S-PCIe", "V100S-32GB"},
		Series: "V100", Architecture: "Volta", Rank: 9,
		MemoryGB: 32, MemoryType: "HBM2", MemoryBandwidthGBs: 1134,
		FP64TFLOPS: 8.2, FP32TFLOPS: 16.4, TensorFP16TFLOPS: 130,
		Link: "none",
		ECC:  Unknown, Unstated: []string{FigureECC},
		Notes:  "V100S PCIe. No Alibaba family offers V100S.",
		Source: srcDatasheet,
	},
	{
		Name: "V100-32GB", Aliases: []string{"V100-32", "V100-32G", "V100-SXM2-32GB", "V100"},
		Series: "V100", Architecture: "Volta", Rank: 10,
		MemoryGB: 32, MemoryType: "HBM2", MemoryBandwidthGBs: 900,
		FP64TFLOPS: 7.8, FP32TFLOPS: 15.7, TensorFP16TFLOPS: 125,
		LinkGBs: 300, Link: "NVLink",
		ECC: Unknown, Offered: true, Unstated: []string{FigureECC},
		Notes:  "V100 SXM2 32 GB.",
		Source: srcDatasheet,
	},
	{
		Name: "V100-16GB", Aliases: []string{"V100-16", "V100-16G", "V100-SXM2-16GB"},
		Series: "V100", Architecture: "Volta", Rank: 11,
		MemoryGB: 16, MemoryType: "HBM2", MemoryBandwidthGBs: 900,
		FP64TFLOPS: 7.8, FP32TFLOPS: 15.7, TensorFP16TFLOPS: 125,
		LinkGBs: 300, Link: "NVLink",
		ECC: Unknown, Offered: true, Unstated: []string{FigureECC},
		Notes:  "V100 SXM2 16 GB.",
		Source: srcDatasheet,
	},
	{
		Name: "T4", Aliases: []string{"T4-16GB"},
		Series: "T4", Architecture: "Turing", Rank: 12,
		MemoryGB: 16, MemoryType: "GDDR6", MemoryBandwidthGBs: 320,
		FP64TFLOPS: 0.25, FP32TFLOPS: 8.1, TensorFP16TFLOPS: 65,
		FP64Derived: "~0.25 = FP32 8.1 TFLOPS / 32 (an FP64:FP32 rate of 1:32); NVIDIA publishes no FP64 figure for T4",
		Link:        "none",
		ECC:         Unknown, Offered: true, Unstated: []string{FigureECC},
		Notes:  "FP64 ~0.25 TFLOPS is derived, not an NVIDIA figure (see FP64Derived); no GPU-GPU link.",
		Source: srcDerivedFP64,
	},
}
