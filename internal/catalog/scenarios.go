package catalog

// This file holds the three research scenario profiles: the targets this
// project sets for each scenario (SOURCES.md section 2), its recommended models
// and its GPU utilisation alert threshold. Fields marked "catalog decision" are
// choices of this package, explained where they are set.

// Scenario names.
const (
	ScenarioAITraining            = "ai_training"
	ScenarioMolecularDynamics     = "molecular_dynamics"
	ScenarioEngineeringSimulation = "engineering_simulation"
)

// Scenario is a research workload profile and its requirements.
type Scenario struct {
	Name        string
	Title       string
	Description string
	// MinGPUMemoryGB per GPU; a GPU below it is an error. 0 = no minimum.
	MinGPUMemoryGB int
	// MinGPULinkGBs is the GPU-GPU interconnect target inside a node (GB/s);
	// multi-GPU types below it get a warning. 0 = no target.
	MinGPULinkGBs float64
	// MinMemoryBandwidthGBs per GPU; below it is a warning. 0 = no target.
	MinMemoryBandwidthGBs float64
	// NeedsFP64: double precision is required. MinFP64TFLOPS is the figure
	// below which FP64 is treated as "not worth using" (catalog decision: 5
	// TFLOPS separates the datasheet's HPC parts, 7.8 and up, from the
	// graphics/inference parts, 1 and below).
	NeedsFP64     bool
	MinFP64TFLOPS float64
	// Precision lists the precisions the workload uses.
	Precision []string
	// NeedsECC: ECC GPU memory required.
	NeedsECC bool
	// NeedsInterNodeRDMA: multi-node runs need RDMA between nodes.
	NeedsInterNodeRDMA bool
	// MinNetworkGbps is the RDMA bandwidth target between compute nodes in
	// Gbit/s (the cluster's compute-to-compute target, SOURCES.md section 2).
	// Where it is set, every candidate is measured against it, whatever the
	// node count: a type is sized for the cluster it will join. 0 = no target.
	MinNetworkGbps float64
	// RankBy lists, most important first, the GPU figures (Figure*
	// constants) that rank types meeting the same requirements: higher
	// first, and a figure the vendor publishes before one it does not (a
	// derived or "n/a" figure counts as not published). Catalog decision:
	// tensor throughput then memory bandwidth for training; FP64 then memory
	// bandwidth for the double-precision scenarios (MD and CFD/FEA codes are
	// bound by both).
	RankBy []string
	// MinParallelEfficiency (fraction) and MinMTBFHours are stated targets the
	// catalog cannot measure; checks report them as info.
	MinParallelEfficiency float64
	MinMTBFHours          int
	// RecommendedModels is the scenario's starting recommendation (SOURCES.md
	// section 2); it contradicts the requirements in places, which Select
	// reports as warnings.
	RecommendedModels []string
	// PreferredGPUsPerNode is used for ranking when the request leaves
	// GPUsPerNode unset (catalog decision): 8 for ai_training, the largest
	// NVLink domain offered; 0 elsewhere, meaning the smallest size.
	PreferredGPUsPerNode int
	// GPUUtilAlertPercent: alert when GPU utilisation is below this.
	GPUUtilAlertPercent int
	// Other carries the requirements the catalog does not check.
	Other []string
}

var scenarios = []Scenario{
	{
		Name:                 ScenarioAITraining,
		Title:                "AI training (LLM / large model)",
		Description:          "Large-model training: multi-GPU NVLink nodes, RDMA between nodes, TB-scale data.",
		MinGPUMemoryGB:       80,
		MinGPULinkGBs:        400,
		Precision:            []string{"FP16", "BF16", "FP32"},
		NeedsInterNodeRDMA:   true,
		MinNetworkGbps:       100,
		RankBy:               []string{FigureTensorFP16, FigureMemoryBandwidth},
		RecommendedModels:    []string{"A100", "H100"},
		PreferredGPUsPerNode: 8,
		GPUUtilAlertPercent:  85,
		Other:                []string{"multi-GPU NVLink or RDMA between nodes", "gradient checkpointing", "TB-scale data"},
	},
	{
		Name:                  ScenarioMolecularDynamics,
		Title:                 "Molecular dynamics",
		Description:           "MPI molecular dynamics: millions of atoms, long runs, double precision, RDMA between nodes.",
		MinMemoryBandwidthGBs: 1000,
		NeedsFP64:             true,
		MinFP64TFLOPS:         5,
		Precision:             []string{"FP64"},
		NeedsInterNodeRDMA:    true,
		RankBy:                []string{FigureFP64, FigureMemoryBandwidth},
		MinParallelEfficiency: 0.9,
		RecommendedModels:     []string{"A40", "A10"},
		GPUUtilAlertPercent:   70,
		Other:                 []string{"millions of atoms", "long runs", "parallel efficiency >= 90%"},
	},
	{
		Name:                ScenarioEngineeringSimulation,
		Title:               "Engineering simulation (CFD / FEA)",
		Description:         "CFD / FEA: double precision (mixed allowed), ECC memory, long stable runs.",
		NeedsFP64:           true,
		MinFP64TFLOPS:       5,
		Precision:           []string{"FP64", "mixed"},
		NeedsECC:            true,
		RankBy:              []string{FigureFP64, FigureMemoryBandwidth},
		MinMTBFHours:        5000,
		RecommendedModels:   []string{"T4", "V100S"},
		GPUUtilAlertPercent: 70,
		Other:               []string{"stability MTBF >= 5000 h", "ECC memory", "CUDA and OpenCL", "software version isolation"},
	},
}
