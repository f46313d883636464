package health

import (
	"errors"
	"math"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

func TestAllReduceFloor(t *testing.T) {
	cases := []struct {
		typ      string
		nodes    int
		kind     string
		peak     float64 // GB/s each way
		floorGBs float64
	}{
		// A100 SXM: NVLink 600 GB/s both ways -> 300 each way; one node: NVLink bounds it.
		{"ecs.gn7e-c16g1.32xlarge", 1, PathNVLink, 300, 210},
		{"gn7-c13g1.26xlarge", 1, PathNVLink, 300, 210},
		// Hopper class: the type states 900 GB/s.
		{"ecs.gn8v-8x.48xlarge", 1, PathNVLink, 450, 315},
		// V100 SXM2: NVLink 300 GB/s -> 150.
		{"ecs.gn6v-c8g1.16xlarge", 1, PathNVLink, 150, 105},
		// PCIe-only types: L20 and A10 on Gen4 x16, T4 on Gen3 x16.
		{"ecs.gn8is-8x.32xlarge", 1, PathPCIe, 31.5, 22.05},
		{"ecs.gn7i-c32g1.32xlarge", 1, PathPCIe, 31.5, 22.05},
		{"ecs.gn6i-c24g1.24xlarge", 1, PathPCIe, 15.75, 11.025},
		// ebmgn7: NVLink not stated by the vendor, so PCIe of the A100's generation.
		{"ecs.ebmgn7.26xlarge", 1, PathPCIe, 31.5, 22.05},
		// Across nodes the network is slower than NVLink: eRDMA 160 Gbit/s = 20 GB/s.
		{"ecs.ebmgn7ex.32xlarge", 2, PathERDMA, 20, 14},
		{"ecs.ebmgn8v.48xlarge", 4, PathERDMA, 20, 14},
		// gn8v: eRDMA without a stated figure shares the size's 100 Gbit/s.
		{"ecs.gn8v-8x.48xlarge", 2, PathERDMA, 12.5, 8.75},
		// SCC: RoCE 800 Gbit/s = 100 GB/s.
		{"ecs.sccgn7ex.32xlarge", 8, PathRoCE, 100, 70},
		// No RDMA: the VPC's 64 Gbit/s.
		{"ecs.gn7e-c16g1.32xlarge", 2, PathVPC, 8, 5.6},
		// One GPU a node: only the network is crossed.
		{"ecs.gn7e-c16g1.4xlarge", 3, PathVPC, 1, 0.7},
	}
	for _, c := range cases {
		f, err := AllReduceFloor(c.typ, c.nodes)
		if err != nil {
			t.Errorf("%s x%d: %v", c.typ, c.nodes, err)
			continue
		}
		if f.Bottleneck.Kind != c.kind || !near(f.Bottleneck.PeakGBs, c.peak) || !near(f.GBs, c.floorGBs) {
			t.Errorf("%s x%d: bottleneck %s %.3f GB/s, floor %.3f; want %s %.3f, floor %.3f", c.typ, c.nodes,
				f.Bottleneck.Kind, f.Bottleneck.PeakGBs, f.GBs, c.kind, c.peak, c.floorGBs)
		}
		if f.Bottleneck.Source == "" {
			t.Errorf("%s x%d: the bound names no source", c.typ, c.nodes)
		}
		if !f.Passes(f.GBs) || f.Passes(f.GBs*0.99) {
			t.Errorf("%s x%d: Passes is not >= the floor", c.typ, c.nodes)
		}
	}
}

func TestAllReduceFloorRefuses(t *testing.T) {
	cases := []struct {
		typ   string
		nodes int
		want  error // nil: any error
	}{
		{"ecs.nope.large", 1, ErrUnknownType},
		{"ecs.g7.xlarge", 2, ErrNoGPU},
		{"ecs.gn7e-c16g1.32xlarge", 0, nil},
		{"ecs.gn7e-c16g1.4xlarge", 1, nil}, // one GPU on one node: nothing to reduce
	}
	for _, c := range cases {
		_, err := AllReduceFloor(c.typ, c.nodes)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s x%d: error %v, want %v", c.typ, c.nodes, err, c.want)
		}
	}
}

// TestEveryMultiGPUTypeHasAFloor: a type added to the catalog without a PCIe generation for its
// GPU model, or without a network figure, is caught here rather than by the gate.
func TestEveryMultiGPUTypeHasAFloor(t *testing.T) {
	for _, typ := range catalog.GPUInstanceTypes() {
		for _, nodes := range []int{1, 2} {
			if typ.GPUs == 1 && nodes == 1 {
				continue
			}
			f, err := AllReduceFloor(typ.Name, nodes)
			if err != nil {
				t.Errorf("%s x%d: %v", typ.Name, nodes, err)
				continue
			}
			if f.GBs <= 0 || f.GBs >= f.Bottleneck.PeakGBs {
				t.Errorf("%s x%d: floor %.2f of peak %.2f", typ.Name, nodes, f.GBs, f.Bottleneck.PeakGBs)
			}
		}
	}
}

func TestBusBandwidth(t *testing.T) {
	cases := []struct {
		bytes   int64
		seconds float64
		ranks   int
		algbw   float64
		busbw   float64
	}{
		// 8 ranks: factor 2*7/8 = 1.75.
		{8 << 30, 0.05, 8, 171.798691840, 300.647710720},
		// 2 ranks: factor 1.
		{1e9, 0.1, 2, 10, 10},
		// 16 ranks over two nodes: factor 2*15/16.
		{1e9, 0.1, 16, 10, 18.75},
		// one rank moves nothing over a link.
		{1e9, 0.1, 1, 10, 0},
	}
	for _, c := range cases {
		alg := AlgBandwidth(c.bytes, c.seconds)
		if !near(alg, c.algbw) {
			t.Errorf("algbw(%d B, %gs) = %.6f, want %.6f", c.bytes, c.seconds, alg, c.algbw)
		}
		if bus := AllReduceBusBandwidth(alg, c.ranks); !near(bus, c.busbw) {
			t.Errorf("busbw(%.3f, %d ranks) = %.6f, want %.6f", alg, c.ranks, bus, c.busbw)
		}
	}
	if !math.IsInf(AlgBandwidth(1, 0), 1) {
		t.Error("algbw of a zero time is not +Inf")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6*math.Max(1, math.Abs(b)) }

// BenchmarkAllReduceFloorPool judges a pool of 10,000 nodes' measured busbw against its floor,
// as the gate does once a validation round has reported.
func BenchmarkAllReduceFloorPool(b *testing.B) {
	measured := make([]float64, 10_000)
	for i := range measured {
		measured[i] = 200 + float64(i%50)
	}
	for b.Loop() {
		f, err := AllReduceFloor("ecs.gn7e-c16g1.32xlarge", 1)
		if err != nil {
			b.Fatal(err)
		}
		failed := 0
		for _, m := range measured {
			if !f.Passes(m) {
				failed++
			}
		}
		if failed == 0 {
			b.Fatal("no node below the floor")
		}
	}
}
