package health

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

// The all-reduce bus bandwidth floor: what a validation job (nccl-tests' all_reduce_perf) must
// measure on a pool before its nodes take work.
//
// nccl-tests reports, for an all-reduce of S bytes over n ranks taking t, the algorithm bandwidth
// algbw = S/t and the bus bandwidth busbw = algbw * 2(n-1)/n, "which reflects how optimally the
// hardware is used": each rank has a bandwidth B to the outside world and the best all-reduce
// moves 2(n-1)/n of S through it, so busbw is comparable to the per-rank hardware bottleneck
// ("NVLink, PCI, QPI, or network") whatever n is (URLNCCLTestsPerformance). The floor is that
// bottleneck, per direction, times FloorEfficiency.

// Sources of the figures below.
const (
	// URLNCCLTestsPerformance defines algbw and busbw.
	URLNCCLTestsPerformance = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
	// URLAmpereWhitepaper: third-generation NVLink, 12 links of 25 GB/s each way per A100,
	// "600 GB/sec total bandwidth": NVIDIA's NVLink figures (the catalog's LinkGBs) are both
	// directions added.
	URLAmpereWhitepaper = "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf"
	// URLPCIe: PCI Express 3.0, 4.0 and 5.0 signal 8, 16 and 32 GT/s per lane with 128b/130b
	// encoding, so an x16 link carries 15.75, 31.5 and 63 GB/s each way.
	URLPCIe = "https://pcisig.com/specifications/pciexpress"
)

// FloorEfficiency is the fraction of the bottleneck's per-direction peak the floor asks of a
// measured busbw. A decision of this package, not a vendor figure: NCCL never reaches the link's
// peak (protocol headers, synchronisation, the kernels' own copies), and a gate that failed
// healthy nodes on run-to-run spread would replace good hardware. 0.7 still fails what the gate
// exists to catch: a node whose GPUs fall back from NVLink to PCIe (A100: 31.5 of 300 GB/s each
// way, 11%), that lost half its NVLinks (50%), or whose eRDMA interface runs at a fraction of its
// rate. It does not catch the loss of one NVLink of twelve (92%).
const FloorEfficiency = 0.7

// Path kinds: the hardware a bound is set by.
const (
	PathNVLink = "nvlink"
	PathPCIe   = "pcie"
	PathERDMA  = "erdma" // elastic RDMA interfaces over the VPC
	PathRoCE   = "roce"  // SCC RoCE inside an HPC cluster
	PathVPC    = "vpc"   // the VPC network without RDMA (NCCL's socket transport)
)

// Bound is one path's peak: PeakGBs is GB/s each way, per GPU inside a node and per node
// between nodes, with the figure it comes from.
type Bound struct {
	Kind    string
	PeakGBs float64
	Source  string
}

// Paths are an instance type's two paths for an all-reduce: between its GPUs (Intra, zero for a
// one-GPU type) and between nodes (Inter).
type Paths struct {
	InstanceType string
	GPUs         int
	Intra, Inter Bound
}

// Errors of the functions below.
var (
	ErrUnknownType = errors.New("not an instance type of the catalog")
	ErrNoGPU       = errors.New("instance type has no GPU")
	ErrNotStated   = errors.New("the vendor states no bandwidth for this path")
)

// PathsOf reads an instance type's paths from the catalog: inside the node, the NVLink of its GPU
// model where the type has NVLink (the type's own figure where the vendor states one), else the
// PCIe x16 link of the model's generation; between nodes, the stated eRDMA bandwidth, the RoCE
// bandwidth of an SCC type, else the size's VPC bandwidth (eRDMA without a stated figure shares
// it). Gbit/s figures are divided by 8.
func PathsOf(instanceType string) (Paths, error) {
	t, ok := catalog.LookupInstanceType(instanceType)
	if !ok {
		return Paths{}, fmt.Errorf("%q: %w", instanceType, ErrUnknownType)
	}
	if !t.IsGPU() {
		return Paths{}, fmt.Errorf("%s: %w", t.Name, ErrNoGPU)
	}
	p := Paths{InstanceType: t.Name, GPUs: t.GPUs}
	if t.GPUs > 1 {
		intra, err := intraBound(t)
		if err != nil {
			return Paths{}, err
		}
		p.Intra = intra
	}
	switch {
	case t.ERIGbps > 0:
		p.Inter = Bound{Kind: PathERDMA, PeakGBs: t.ERIGbps / 8, Source: t.Source}
	case t.RoCEGbps > 0:
		p.Inter = Bound{Kind: PathRoCE, PeakGBs: float64(t.RoCEGbps) / 8, Source: t.Source}
	case t.NetworkGbps > 0 && t.ERI:
		p.Inter = Bound{Kind: PathERDMA, PeakGBs: t.NetworkGbps / 8, Source: t.Source + "; eRDMA bandwidth not stated: the size's network bandwidth"}
	case t.NetworkGbps > 0:
		p.Inter = Bound{Kind: PathVPC, PeakGBs: t.NetworkGbps / 8, Source: t.Source}
	}
	return p, nil
}

// intraBound is the per-GPU, per-direction bound between a multi-GPU type's GPUs.
func intraBound(t catalog.InstanceType) (Bound, error) {
	m, _ := t.Model()
	if t.NVLink && m.Link == "NVLink" {
		gbs, src := m.LinkGBs, m.Source
		if t.NVLinkGBs > 0 {
			gbs, src = t.NVLinkGBs, t.Source
		}
		if gbs > 0 {
			return Bound{Kind: PathNVLink, PeakGBs: gbs / 2, Source: src + "; both directions added (" + URLAmpereWhitepaper + ")"}, nil
		}
	}
	gen, ok := pcieGeneration[m.Name]
	if !ok {
		return Bound{}, fmt.Errorf("%s: GPUs of model %q between them: %w", t.Name, m.Name, ErrNotStated)
	}
	return Bound{Kind: PathPCIe, PeakGBs: pcieX16GBs[gen.gen], Source: fmt.Sprintf("PCIe Gen%d x16 (%s; %s)", gen.gen, gen.source, URLPCIe)}, nil
}

// pcieX16GBs is an x16 link's bandwidth each way by PCIe generation (URLPCIe).
var pcieX16GBs = map[int]float64{3: 15.75, 4: 31.5, 5: 63}

// pcieGeneration is the PCIe generation of each catalog GPU model's host interface, from
// NVIDIA's product pages. The Hopper-class part the vendor does not name is taken as Hopper's
// (H100: PCIe Gen5), an estimate as the catalog's other figures of it are.
var pcieGeneration = map[string]struct {
	gen    int
	source string
}{
	"H100":        {5, "https://www.nvidia.com/en-us/data-center/h100/"},
	"Hopper-96GB": {5, "estimate: Hopper's, https://www.nvidia.com/en-us/data-center/h100/"},
	"A100-80GB":   {4, "https://www.nvidia.com/en-us/data-center/a100/"},
	"A100-40GB":   {4, "https://www.nvidia.com/en-us/data-center/a100/"},
	"L20":         {4, "catalog: PCIe Gen4 64 GB/s"},
	"A40":         {4, "https://www.nvidia.com/en-us/data-center/a40/"},
	"A10":         {4, "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"},
	"A30":         {4, "https://www.nvidia.com/en-us/data-center/products/a30-gpu/"},
	"V100S":       {3, "https://www.nvidia.com/en-us/data-center/v100/"},
	"V100-32GB":   {3, "https://www.nvidia.com/en-us/data-center/v100/"},
	"V100-16GB":   {3, "https://www.nvidia.com/en-us/data-center/v100/"},
	"T4":          {3, "https://www.nvidia.com/en-us/data-center/tesla-t4/"},
}

// Bottleneck is the bound an all-reduce over nodes of this type meets: the slower of the GPUs'
// link (when a node has more than one GPU) and, over more than one node, the network.
func (p Paths) Bottleneck(nodes int) (Bound, error) {
	if nodes < 1 {
		return Bound{}, fmt.Errorf("%d nodes: a pool has at least one", nodes)
	}
	var b Bound
	if p.GPUs > 1 {
		b = p.Intra
	}
	if nodes > 1 {
		if p.Inter.PeakGBs <= 0 {
			return Bound{}, fmt.Errorf("%s between nodes: %w", p.InstanceType, ErrNotStated)
		}
		if b.Kind == "" || p.Inter.PeakGBs < b.PeakGBs {
			b = p.Inter
		}
	}
	if b.Kind == "" {
		return Bound{}, fmt.Errorf("%s: one GPU on one node has no all-reduce to measure", p.InstanceType)
	}
	return b, nil
}

// Floor is the busbw a pool's validation job must reach.
type Floor struct {
	InstanceType string
	Nodes        int
	Bottleneck   Bound
	Efficiency   float64
	// GBs is Bottleneck.PeakGBs * Efficiency: the lowest acceptable busbw in GB/s.
	GBs float64
}

// AllReduceFloor is the busbw floor of an all-reduce over nodes nodes of instanceType, every GPU
// of each taking part.
func AllReduceFloor(instanceType string, nodes int) (Floor, error) {
	p, err := PathsOf(instanceType)
	if err != nil {
		return Floor{}, err
	}
	b, err := p.Bottleneck(nodes)
	if err != nil {
		return Floor{}, err
	}
	return Floor{InstanceType: p.InstanceType, Nodes: nodes, Bottleneck: b, Efficiency: FloorEfficiency, GBs: b.PeakGBs * FloorEfficiency}, nil
}

// Passes says whether a measured busbw (GB/s) reaches the floor.
func (f Floor) Passes(busbwGBs float64) bool { return busbwGBs >= f.GBs }

// AlgBandwidth is nccl-tests' algbw in GB/s: bytes moved by one operation over its time.
func AlgBandwidth(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return math.Inf(1)
	}
	return float64(bytes) / seconds / 1e9
}

// AllReduceBusBandwidth is nccl-tests' all-reduce busbw: algbw * 2(n-1)/n over n ranks; 0 for
// fewer than two ranks (nothing crosses a link).
func AllReduceBusBandwidth(algbwGBs float64, ranks int) float64 {
	if ranks < 2 {
		return 0
	}
	return algbwGBs * 2 * float64(ranks-1) / float64(ranks)
}
