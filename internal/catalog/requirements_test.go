package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Each row measures one type against one scenario: every requirement line, in
// order, as Reasons shows it.
func TestRequirements(t *testing.T) {
	tests := []struct {
		scenario, typ string
		nodes         int
		want          []string
	}{
		{ScenarioAITraining, "ebmgn7ex.32xlarge", 1, []string{
			"GPU memory 80 GB per GPU (target >= 80 GB): met",
			"GPU-GPU link 600 GB/s (NVLink, A100-80GB datasheet, model not stated by the vendor) (target >= 400 GB/s): met",
			"network 160 Gbit/s with eRDMA (target >= 100 Gbit/s with RDMA): met",
		}},
		{ScenarioAITraining, "gn8v-8x.16xlarge", 1, []string{
			"GPU memory 96 GB per GPU (target >= 80 GB): met",
			"GPU-GPU link 900 GB/s (NVLink, vendor figure) (target >= 400 GB/s): met",
			"network 32 Gbit/s with eRDMA (target >= 100 Gbit/s with RDMA): missed",
		}},
		{ScenarioAITraining, "gn7e-c16g1.32xlarge", 4, []string{
			"GPU memory 80 GB per GPU (target >= 80 GB): met",
			"GPU-GPU link 600 GB/s (NVLink, A100-80GB datasheet, model not stated by the vendor) (target >= 400 GB/s): met",
			"network 64 Gbit/s, no RDMA (target >= 100 Gbit/s with RDMA): missed",
		}},
		// RoCE counts with its own fabric's bandwidth, not the 64 Gbit/s VPC.
		{ScenarioAITraining, "sccgn7ex.32xlarge", 1, []string{
			"GPU memory 80 GB per GPU (target >= 80 GB): met",
			"GPU-GPU link 600 GB/s (NVLink, A100-80GB datasheet, model not stated by the vendor) (target >= 400 GB/s): met",
			"network 800 Gbit/s with RoCE (SCC) (target >= 100 Gbit/s with RDMA): met",
		}},
		// The TEE family's GPU-GPU bandwidth is not stated: unknown, not met.
		{ScenarioAITraining, "gn8v-tee-8x.48xlarge", 1, []string{
			"GPU memory 96 GB per GPU (target >= 80 GB): met",
			"GPU-GPU link NVLink not stated for gn8v-tee (target >= 400 GB/s): unknown",
			"network 100 Gbit/s, no RDMA (target >= 100 Gbit/s with RDMA): missed",
		}},
		{ScenarioMolecularDynamics, "gn7e-c16g1.4xlarge", 1, []string{
			"memory bandwidth 2,039 GB/s (A100-80GB) (target >= 1,000 GB/s): met",
			"FP64 9.7 TFLOPS (A100-80GB) (target >= 5 TFLOPS): met",
		}},
		{ScenarioMolecularDynamics, "gn7e-c16g1.4xlarge", 2, []string{
			"RDMA between nodes none (8 Gbit/s TCP) (target RDMA between the 2 nodes): missed",
			"memory bandwidth 2,039 GB/s (A100-80GB) (target >= 1,000 GB/s): met",
			"FP64 9.7 TFLOPS (A100-80GB) (target >= 5 TFLOPS): met",
		}},
		{ScenarioMolecularDynamics, "gn8v.4xlarge", 1, []string{
			"memory bandwidth 4,000 GB/s (Hopper-96GB) (target >= 1,000 GB/s): met",
			"FP64 not stated for Hopper-96GB (target >= 5 TFLOPS): unknown",
		}},
		{ScenarioMolecularDynamics, "gn7i-c8g1.2xlarge", 1, []string{
			"memory bandwidth 600 GB/s (A10) (target >= 1,000 GB/s): missed",
			"FP64 ~0.98 TFLOPS (A10, derived, not an NVIDIA figure) (target >= 5 TFLOPS): missed",
		}},
		{ScenarioEngineeringSimulation, "gn8is.2xlarge", 1, []string{
			"FP64 n/a for L20 (datasheet) (target >= 5 TFLOPS): missed",
			"ECC not stated for L20 (target ECC GPU memory): unknown",
		}},
		{ScenarioEngineeringSimulation, "gn6e-c12g1.3xlarge", 1, []string{
			"FP64 7.8 TFLOPS (V100-32GB) (target >= 5 TFLOPS): met",
			"ECC not stated for V100-32GB (target ECC GPU memory): unknown",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.typ, func(t *testing.T) {
			sc, _ := LookupScenario(tt.scenario)
			ty, ok := LookupInstanceType(tt.typ)
			if !ok {
				t.Fatalf("unknown type %s", tt.typ)
			}
			var got []string
			for _, r := range Requirements(sc, ty, tt.nodes) {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("requirements\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The default ai_training pick meets the scenario's 100 Gbit/s RDMA target and
// its reasons say so with the figures; a request that leaves no such type
// says that it cannot, with the best figure it found.
func TestAITrainingNetworkTarget(t *testing.T) {
	cs, rf, err := Select(SelectRequest{Scenario: ScenarioAITraining})
	if err != nil {
		t.Fatal(err)
	}
	top := cs[0]
	if bw := InterNodeGbps(top.InstanceType); bw < 100 || top.InstanceType.RDMA() == "" {
		t.Errorf("default ai_training pick %s has %v Gbit/s, RDMA %q", top.InstanceType.Name, bw, top.InstanceType.RDMA())
	}
	if !slices.Contains(top.Reasons, "network 160 Gbit/s with eRDMA (target >= 100 Gbit/s with RDMA): met") {
		t.Errorf("reasons do not show the network target met: %q", top.Reasons)
	}
	if slices.ContainsFunc(rf, func(f Finding) bool { return f.Code == CodeNetworkTarget }) {
		t.Errorf("network_target finding although the pick meets it: %v", codes(rf))
	}

	// Only 4-GPU A100 80GB sizes: gn7e-c16g1.16xlarge, 32 Gbit/s, no RDMA.
	cs, rf, err = Select(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100-80GB", GPUsPerNode: 4})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rf, func(f Finding) bool { return f.Code == CodeNetworkTarget })
	if i < 0 {
		t.Fatalf("no network_target finding for %s: %v", cs[0].InstanceType.Name, codes(rf))
	}
	if f := rf[i]; f.Severity != SeverityWarning || !strings.Contains(f.Message, "32 Gbit/s, no RDMA") || !strings.Contains(f.Hint, "ebmgn7ex") {
		t.Errorf("finding %+v", f)
	}
	if !strings.HasPrefix(cs[0].Reasons[0], "misses 1 of 3 ai_training requirements: network") {
		t.Errorf("first reason %q", cs[0].Reasons[0])
	}
}

// For training, a GPU whose vendor publishes no tensor throughput ranks after
// one whose throughput is published, when both meet every requirement.
func TestRankingNeedsPublishedFigures(t *testing.T) {
	cs, _, err := Select(SelectRequest{Scenario: ScenarioAITraining})
	if err != nil {
		t.Fatal(err)
	}
	firstHopper := slices.IndexFunc(cs, func(c Candidate) bool { return c.InstanceType.GPU == "Hopper-96GB" })
	lastA100Met := -1
	for i, c := range cs {
		if c.InstanceType.GPU == "A100-80GB" && countStatus(c.Requirements, RequirementMissed) == 0 {
			lastA100Met = i
		}
	}
	if firstHopper < 0 || lastA100Met < 0 || firstHopper < lastA100Met {
		t.Errorf("Hopper-96GB at %d ranks before an A100 80GB type that meets every requirement (%d): %s", firstHopper, lastA100Met, names(cs))
	}
	h := cs[firstHopper]
	if !slices.ContainsFunc(h.Reasons, func(r string) bool { return strings.Contains(r, "FP16/BF16 tensor not published") }) {
		t.Errorf("%s reasons should say its tensor throughput is not published: %q", h.InstanceType.Name, h.Reasons)
	}
}

// The region's own answer decides what is offered: a first choice the region
// does not sell is replaced by the next, with a finding and a reason.
func TestSelectRegionFallback(t *testing.T) {
	allBut := func(families ...string) []string {
		var out []string
		for _, ty := range GPUInstanceTypes() {
			if !slices.Contains(families, ty.Family) {
				out = append(out, ty.ShortName()) // without the prefix, as some callers pass them
			}
		}
		return out
	}
	tests := []struct {
		name      string
		req       SelectRequest
		sells     []string
		want      string
		fallsBack string // first choice named by the finding; "" = no fallback
	}{
		{"sells the first choice", SelectRequest{Scenario: ScenarioAITraining}, allBut(), "ecs.ebmgn7ex.32xlarge", ""},
		{"no ebmgn7ex", SelectRequest{Scenario: ScenarioAITraining}, allBut("ebmgn7ex"), "ecs.sccgn7ex.32xlarge", "ebmgn7ex.32xlarge"},
		{"ai_training on H100 without gn8v", SelectRequest{Scenario: ScenarioAITraining, GPUModel: "H100"}, allBut("gn8v"), "ecs.ebmgn8v.48xlarge", "gn8v-8x.48xlarge"},
		{"A100 training without any A100 eRDMA type", SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100"}, allBut("ebmgn7ex", "sccgn7ex"), "ecs.gn7e-c16g1.32xlarge", "ebmgn7ex.32xlarge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Availability = &RegionAvailability{Region: "region cn-test", InstanceTypes: tt.sells}
			cs, rf, err := Select(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if cs[0].InstanceType.Name != tt.want || cs[0].Rank != 1 {
				t.Errorf("chose %s (rank %d), want %s", cs[0].InstanceType.Name, cs[0].Rank, tt.want)
			}
			for _, c := range cs {
				if !slices.Contains(tt.sells, c.InstanceType.ShortName()) {
					t.Errorf("candidate %s is not sold in the region", c.InstanceType.Name)
				}
			}
			i := slices.IndexFunc(rf, func(f Finding) bool { return f.Code == CodeRegionFallback })
			if tt.fallsBack == "" {
				if i >= 0 {
					t.Errorf("unexpected fallback finding %+v", rf[i])
				}
				return
			}
			if i < 0 {
				t.Fatalf("no region_fallback finding: %v", codes(rf))
			}
			if f := rf[i]; f.Severity != SeverityWarning || !strings.Contains(f.Message, tt.fallsBack) || !strings.Contains(f.Message, "cn-test") {
				t.Errorf("finding %+v", f)
			}
			if !strings.Contains(cs[0].Reasons[0], "does not sell the first choice "+tt.fallsBack) {
				t.Errorf("first reason %q should name the first choice", cs[0].Reasons[0])
			}
		})
	}

	// A region that sells none of the fitting types: an error that says so.
	_, _, err := Select(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "H100",
		Availability: &RegionAvailability{Region: "region cn-test", InstanceTypes: allBut("gn8v", "ebmgn8v", "gn8v-tee")}})
	var pe *planerr.Error
	if !errors.Is(err, ErrNoCandidate) || !errors.As(err, &pe) || pe.Path != "offered_instance_types" || !strings.Contains(err.Error(), "region cn-test sells none") {
		t.Errorf("err = %v", err)
	}
}
