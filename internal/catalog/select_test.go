package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Every scenario x every requested GPU model (the 12 catalog models plus the
// bare series A100 and V100), one node, no GPU count: the chosen type, the
// severities of its findings and the request-level findings. want == ""
// means no type fits (ErrNoCandidate).
func TestSelectScenarioByModel(t *testing.T) {
	const (
		ai = ScenarioAITraining
		md = ScenarioMolecularDynamics
		es = ScenarioEngineeringSimulation
	)
	memErr := "error:gpu_memory"
	tests := []struct {
		scenario, model string
		want            string
		findings        []string // of the chosen type; on no candidate: none
		request         []string // request-level (plus the excluding errors, deduplicated per family)
	}{
		// ai_training: the 100 Gbit/s RDMA network target picks the 8-GPU sizes with eRDMA.
		{ai, "H100", "ecs.gn8v-8x.48xlarge", []string{"info:model_not_stated", "info:region_limited"}, []string{"warning:model_substitute"}},
		{ai, "Hopper-96GB", "ecs.gn8v-8x.48xlarge", []string{"info:model_not_stated", "info:region_limited"}, nil},
		{ai, "A100-80GB", "ecs.ebmgn7ex.32xlarge", []string{"info:model_not_stated"}, nil},
		{ai, "A100", "ecs.ebmgn7ex.32xlarge", []string{"info:model_not_stated"}, []string{"info:series_request"}},
		{ai, "A100-40GB", "", nil, []string{memErr, memErr}},
		{ai, "L20", "", nil, []string{memErr, memErr, memErr}},
		{ai, "A40", "", nil, []string{"warning:model_substitute", memErr, memErr, memErr, memErr, memErr}},
		{ai, "A10", "", nil, []string{memErr, memErr}},
		{ai, "A30", "", nil, []string{memErr}},
		{ai, "V100S", "", nil, []string{"warning:model_substitute", memErr, memErr, memErr, memErr}},
		{ai, "V100-32GB", "", nil, []string{memErr, memErr}},
		{ai, "V100-16GB", "", nil, []string{memErr, memErr}},
		{ai, "V100", "", nil, []string{"info:series_request", memErr, memErr, memErr, memErr}},
		{ai, "T4", "", nil, []string{memErr, memErr}},

		{md, "H100", "ecs.gn8v.4xlarge", []string{"warning:fp64", "info:model_not_stated", "info:region_limited"}, []string{"warning:model_substitute"}},
		{md, "Hopper-96GB", "ecs.gn8v.4xlarge", []string{"warning:fp64", "info:model_not_stated", "info:region_limited"}, nil},
		{md, "A100-80GB", "ecs.gn7e-c16g1.4xlarge", []string{"info:model_not_stated"}, nil},
		{md, "A100", "ecs.gn7e-c16g1.4xlarge", []string{"info:model_not_stated"}, []string{"info:series_request"}},
		{md, "A100-40GB", "ecs.gn7-c12g1.3xlarge", []string{"info:model_not_stated"}, nil},
		{md, "L20", "ecs.gn8is.2xlarge", []string{"warning:memory_bandwidth", "warning:fp64", "info:region_limited"}, nil},
		{md, "A40", "ecs.gn8is.2xlarge", []string{"warning:memory_bandwidth", "warning:fp64", "info:region_limited"}, []string{"warning:model_substitute", "warning:matrix_contradiction"}},
		{md, "A10", "ecs.gn7i-c8g1.2xlarge", []string{"warning:memory_bandwidth", "warning:fp64"}, []string{"warning:matrix_contradiction"}},
		{md, "A30", "ecs.gn7s-c8g1.2xlarge", []string{"warning:not_recommended", "warning:memory_bandwidth", "warning:fp64"}, nil},
		{md, "V100S", "ecs.gn6e-c12g1.3xlarge", []string{"warning:memory_bandwidth"}, []string{"warning:model_substitute"}},
		{md, "V100-32GB", "ecs.gn6e-c12g1.3xlarge", []string{"warning:memory_bandwidth"}, nil},
		{md, "V100-16GB", "ecs.gn6v-c8g1.2xlarge", []string{"warning:memory_bandwidth"}, nil},
		{md, "V100", "ecs.gn6e-c12g1.3xlarge", []string{"warning:memory_bandwidth"}, []string{"info:series_request"}},
		{md, "T4", "ecs.gn6i-c4g1.xlarge", []string{"warning:memory_bandwidth", "warning:fp64"}, nil},

		{es, "H100", "ecs.gn8v.4xlarge", []string{"warning:fp64", "info:model_not_stated", "info:region_limited", "info:ecc", "info:stability"}, []string{"warning:model_substitute"}},
		{es, "Hopper-96GB", "ecs.gn8v.4xlarge", []string{"warning:fp64", "info:model_not_stated", "info:region_limited", "info:ecc", "info:stability"}, nil},
		{es, "A100-80GB", "ecs.gn7e-c16g1.4xlarge", []string{"info:model_not_stated", "info:ecc", "info:stability"}, nil},
		{es, "A100", "ecs.gn7e-c16g1.4xlarge", []string{"info:model_not_stated", "info:ecc", "info:stability"}, []string{"info:series_request"}},
		{es, "A100-40GB", "ecs.gn7-c12g1.3xlarge", []string{"info:model_not_stated", "info:ecc", "info:stability"}, nil},
		{es, "L20", "ecs.gn8is.2xlarge", []string{"warning:fp64", "info:region_limited", "info:ecc", "info:stability"}, nil},
		{es, "A40", "ecs.gn8is.2xlarge", []string{"warning:fp64", "info:region_limited", "info:ecc", "info:stability"}, []string{"warning:model_substitute"}},
		{es, "A10", "ecs.gn7i-c8g1.2xlarge", []string{"warning:fp64", "info:ecc", "info:stability"}, nil},
		{es, "A30", "ecs.gn7s-c8g1.2xlarge", []string{"warning:not_recommended", "warning:fp64", "info:ecc", "info:stability"}, nil},
		{es, "V100S", "ecs.gn6e-c12g1.3xlarge", []string{"info:ecc", "info:stability"}, []string{"warning:model_substitute"}},
		{es, "V100-32GB", "ecs.gn6e-c12g1.3xlarge", []string{"info:ecc", "info:stability"}, nil},
		{es, "V100-16GB", "ecs.gn6v-c8g1.2xlarge", []string{"info:ecc", "info:stability"}, nil},
		{es, "V100", "ecs.gn6e-c12g1.3xlarge", []string{"info:ecc", "info:stability"}, []string{"info:series_request"}},
		{es, "T4", "ecs.gn6i-c4g1.xlarge", []string{"warning:fp64", "info:ecc", "info:stability"}, []string{"warning:matrix_contradiction"}},
	}
	// Every scenario x model pair is covered.
	for _, sc := range ScenarioNames() {
		for _, m := range append(GPUModelNames(), "A100", "V100") {
			if !slices.ContainsFunc(tests, func(tt struct {
				scenario, model string
				want            string
				findings        []string
				request         []string
			}) bool {
				return tt.scenario == sc && tt.model == m
			}) {
				t.Errorf("no test for %s x %s", sc, m)
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.model, func(t *testing.T) {
			cs, rf, err := Select(SelectRequest{Scenario: tt.scenario, GPUModel: tt.model})
			if got := codes(rf); !slices.Equal(got, tt.request) {
				t.Errorf("request findings %v, want %v", got, tt.request)
			}
			if tt.want == "" {
				if !errors.Is(err, ErrNoCandidate) || len(cs) != 0 {
					t.Fatalf("want ErrNoCandidate, got %d candidates, err %v", len(cs), err)
				}
				if !strings.Contains(err.Error(), "80 GB") || !strings.Contains(err.Error(), "families that fit: ebmgn7ex") {
					t.Errorf("error should say why and what fits: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			top := cs[0]
			if top.InstanceType.Name != tt.want || top.Rank != 1 {
				t.Errorf("chose %s (rank %d), want %s", top.InstanceType.Name, top.Rank, tt.want)
			}
			if got := codes(top.Findings); !slices.Equal(got, tt.findings) {
				t.Errorf("findings %v, want %v", got, tt.findings)
			}
			for i, c := range cs {
				if c.Rank != i+1 || HasErrors(c.Findings) || len(c.Reasons) < 4 {
					t.Errorf("candidate %d: rank %d, findings %v, reasons %v", i, c.Rank, codes(c.Findings), c.Reasons)
				}
				if !c.InstanceType.IsGPU() {
					t.Errorf("CPU type %s selected", c.InstanceType.Name)
				}
			}
		})
	}
}

func TestSelectWithoutModel(t *testing.T) {
	tests := []struct {
		req  SelectRequest
		want string
	}{
		// ai_training: A100 80GB (published tensor throughput) with eRDMA at
		// 160 Gbit/s; sccgn7ex (RoCE) ties on everything but the name.
		{SelectRequest{Scenario: ScenarioAITraining}, "ecs.ebmgn7ex.32xlarge"},
		{SelectRequest{Scenario: ScenarioMolecularDynamics}, "ecs.gn7e-c16g1.4xlarge"},
		{SelectRequest{Scenario: ScenarioEngineeringSimulation}, "ecs.gn7e-c16g1.4xlarge"},
		// Multi-node molecular dynamics: the A100-class types without RDMA get a
		// warning, so ebmgn7ex (eRDMA) beats gn7e; sccgn7ex has RoCE and ties
		// on everything but the name.
		{SelectRequest{Scenario: ScenarioMolecularDynamics, Nodes: 4}, "ecs.ebmgn7ex.32xlarge"},
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100", Nodes: 4}, "ecs.ebmgn7ex.32xlarge"},
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100-80GB", GPUsPerNode: 4}, "ecs.gn7e-c16g1.16xlarge"},
		// gn8v-8x.16xlarge has 32 Gbit/s; gn8v-8x.48xlarge and ebmgn8v meet 100
		// Gbit/s with the same vCPU and memory, and virtualised comes first.
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "H100", GPUsPerNode: 8}, "ecs.gn8v-8x.48xlarge"},
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "H100", RequireBareMetal: true}, "ecs.ebmgn8v.48xlarge"},
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100", RequireBareMetal: true}, "ecs.ebmgn7ex.32xlarge"},
		// gn8is-8x.32xlarge and ebmgn8is.32xlarge tie on every figure: virtualised first.
		{SelectRequest{Scenario: ScenarioMolecularDynamics, GPUModel: "L20", GPUsPerNode: 8, Nodes: 2}, "ecs.gn8is-8x.32xlarge"},
		// gn8v.4xlarge and gn8v-tee.4xlarge tie on every figure: general-purpose first.
		{SelectRequest{Scenario: ScenarioEngineeringSimulation, GPUModel: "H100"}, "ecs.gn8v.4xlarge"},
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100", RequireERDMA: true}, "ecs.ebmgn7ex.32xlarge"},
		{SelectRequest{Scenario: ScenarioEngineeringSimulation, GPUModel: "A40", GPUsPerNode: 2}, "ecs.gn8is-2x.8xlarge"},
		// gn7i's 4x sizes (added from the vendor's full gn7i table) have fewer
		// vCPUs than gn7i-c32g1.32xlarge, so the unchanged ranking picks them.
		{SelectRequest{Scenario: ScenarioMolecularDynamics, GPUModel: "A10", GPUsPerNode: 4, Nodes: 2}, "ecs.gn7i-4x.8xlarge"},
		{SelectRequest{Scenario: ScenarioMolecularDynamics, GPUModel: "A10", GPUsPerNode: 8}, "ecs.gn7i-8x.16xlarge"},
	}
	for _, tt := range tests {
		cs, _, err := Select(tt.req)
		if err != nil {
			t.Errorf("%+v: %v", tt.req, err)
			continue
		}
		if cs[0].InstanceType.Name != tt.want {
			t.Errorf("%+v: chose %s, want %s; ranking: %s", tt.req, cs[0].InstanceType.Name, tt.want, names(cs))
		}
	}
}

func TestSelectRDMAHandling(t *testing.T) {
	cs, _, err := Select(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100-80GB", Nodes: 4})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Candidate{}
	for _, c := range cs {
		byName[c.InstanceType.Name] = c
	}
	if c := byName["ecs.ebmgn7ex.32xlarge"]; !c.EnableERDMA || HasErrors(c.Findings) {
		t.Errorf("ebmgn7ex should get eRDMA enabled: %+v", c)
	}
	if c := byName["ecs.sccgn7ex.32xlarge"]; c.EnableERDMA || !c.NeedsHPCCluster {
		t.Errorf("sccgn7ex: RoCE, no eRDMA, HPC cluster: %+v", c)
	}
	if c := byName["ecs.gn7e-c16g1.32xlarge"]; !slices.Contains(codes(c.Findings), "warning:inter_node_rdma") {
		t.Errorf("gn7e over 4 nodes should warn about RDMA: %v", codes(c.Findings))
	}
	// Warnings rank lower: every RDMA-capable 8-GPU type precedes gn7e's.
	if byName["ecs.gn7e-c16g1.32xlarge"].Rank < byName["ecs.sccgn7ex.32xlarge"].Rank {
		t.Errorf("ranking: %s", names(cs))
	}
	// Single node: eRDMA is not switched on for nothing.
	cs, _, _ = Select(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "H100"})
	if cs[0].EnableERDMA {
		t.Error("single node should not enable eRDMA")
	}
	// RequireERDMA filters out types without ERI or RoCE.
	cs, _, _ = Select(SelectRequest{Scenario: ScenarioEngineeringSimulation, RequireERDMA: true})
	for _, c := range cs {
		if c.InstanceType.RDMA() == "" {
			t.Errorf("%s has no RDMA", c.InstanceType.Name)
		}
	}
}

func TestSelectDeterministic(t *testing.T) {
	a, _, _ := Select(SelectRequest{Scenario: ScenarioMolecularDynamics, Nodes: 3})
	for range 5 {
		b, _, _ := Select(SelectRequest{Scenario: ScenarioMolecularDynamics, Nodes: 3})
		if names(a) != names(b) {
			t.Fatalf("order changed:\n%s\n%s", names(a), names(b))
		}
	}
}

func TestSelectErrors(t *testing.T) {
	tests := []struct {
		req      SelectRequest
		is       error
		contains []string
	}{
		{SelectRequest{Scenario: "weather"}, ErrUnknownScenario, []string{"ai_training, molecular_dynamics, engineering_simulation"}},
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "h200"}, ErrUnknownGPUModel, []string{"H100", "V100S"}},
		{SelectRequest{Scenario: ScenarioMolecularDynamics, GPUModel: "A100-40GB", GPUsPerNode: 2}, ErrGPUCountNotOffered, []string{"gn7: 1, 4, 8", "ebmgn7: 8"}},
		{SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100", GPUsPerNode: 3}, ErrGPUCountNotOffered, []string{"gn7e: 1, 2, 4, 8", "sccgn7ex: 8", "gn7: 1, 4, 8"}},
		{SelectRequest{Scenario: ScenarioAITraining, GPUsPerNode: 16}, ErrGPUCountNotOffered, []string{"gn8v: 1, 2, 4, 8"}},
		{SelectRequest{Scenario: ScenarioEngineeringSimulation, GPUModel: "A30", RequireBareMetal: true}, ErrNoCandidate, []string{"bare metal", "families that fit"}},
		{SelectRequest{Scenario: ScenarioEngineeringSimulation, GPUModel: "T4", RequireERDMA: true}, ErrNoCandidate, []string{"eRDMA or RoCE"}},
	}
	for _, tt := range tests {
		_, _, err := Select(tt.req)
		if !errors.Is(err, tt.is) {
			t.Errorf("%+v: err %v, want %v", tt.req, err, tt.is)
			continue
		}
		for _, c := range tt.contains {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("%+v: error %q should contain %q", tt.req, err, c)
			}
		}
	}
}

func TestInstanceTypeFor(t *testing.T) {
	tests := []struct {
		model string
		gpus  int
		want  string
	}{
		{"A100", 1, "ecs.gn7e-c16g1.4xlarge"},
		{"A100", 8, "ecs.gn7e-c16g1.32xlarge"},
		{"A100-40GB", 4, "ecs.gn7-c13g1.13xlarge"},
		{"H100", 1, "ecs.gn8v.4xlarge"},
		{"H100", 4, "ecs.gn8v-4x.8xlarge"},
		{"H100", 8, "ecs.gn8v-8x.16xlarge"},
		{"A40", 1, "ecs.gn8is.2xlarge"},
		{"A40", 8, "ecs.gn8is-8x.32xlarge"},
		{"A10", 2, "ecs.gn7i-2x.8xlarge"},
		{"A10", 8, "ecs.gn7i-8x.16xlarge"},
		{"T4", 1, "ecs.gn6i-c4g1.xlarge"},
		{"T4", 4, "ecs.gn6i-c24g1.24xlarge"},
		{"V100S", 1, "ecs.gn6e-c12g1.3xlarge"},
		{"V100S", 8, "ecs.gn6e-c12g1.24xlarge"},
		{"V100-16GB", 8, "ecs.gn6v-c8g1.16xlarge"},
		{"L20", 4, "ecs.gn8is-4x.16xlarge"},
		{"A30", 4, "ecs.gn7s-c32g1.32xlarge"},
	}
	for _, tt := range tests {
		got, err := InstanceTypeFor(tt.model, tt.gpus)
		if err != nil || got.Name != tt.want {
			t.Errorf("InstanceTypeFor(%s, %d) = %s, %v; want %s", tt.model, tt.gpus, got.Name, err, tt.want)
		}
	}
	_, err := InstanceTypeFor("T4", 8)
	if !errors.Is(err, ErrGPUCountNotOffered) || !strings.Contains(err.Error(), "gn6i: 1, 2, 4") {
		t.Errorf("T4 x 8: %v", err)
	}
	if _, err := InstanceTypeFor("B200", 8); !errors.Is(err, ErrUnknownGPUModel) {
		t.Errorf("B200: %v", err)
	}
}

func names(cs []Candidate) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.InstanceType.ShortName())
	}
	return strings.Join(s, " ")
}

// The vendor builds SCC on ECS Bare Metal, so require_bare_metal keeps sccgn7ex.
func TestSelectBareMetalKeepsSCC(t *testing.T) {
	cs, _, err := Select(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100-80GB", RequireBareMetal: true, Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.InstanceType.Family)
	}
	for _, want := range []string{"ebmgn7e", "ebmgn7ex", "sccgn7ex"} {
		if !slices.Contains(got, want) {
			t.Errorf("bare-metal candidates %v miss %s", got, want)
		}
	}
	if slices.Contains(got, "gn7e") {
		t.Errorf("bare-metal candidates %v include the virtualised gn7e", got)
	}
}

// A chosen type from a family the vendor sells only in some regions carries an
// info finding quoting the vendor; it does not change the ranking (info only).
func TestSelectRegionLimitedFinding(t *testing.T) {
	cs, _, err := Select(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "H100"})
	if err != nil {
		t.Fatal(err)
	}
	top := cs[0]
	i := slices.IndexFunc(top.Findings, func(f Finding) bool { return f.Code == CodeRegionLimited })
	if i < 0 {
		t.Fatalf("%s: no %s finding in %v", top.InstanceType.Name, CodeRegionLimited, codes(top.Findings))
	}
	f := top.Findings[i]
	if f.Severity != SeverityInfo || !strings.Contains(f.Measured, "contact Alibaba Cloud sales") || f.Hint == "" {
		t.Errorf("finding %+v", f)
	}
	// The families the vendor sells everywhere carry no such finding.
	cs, _, err = Select(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A100"})
	if err != nil || !slices.ContainsFunc(cs, func(c Candidate) bool { return c.InstanceType.Family == "gn7e" }) {
		t.Fatalf("A100 training candidates %s, err %v: want gn7e among them", names(cs), err)
	}
	for _, c := range cs {
		if c.InstanceType.Family == "gn7e" && slices.ContainsFunc(c.Findings, func(f Finding) bool { return f.Code == CodeRegionLimited }) {
			t.Errorf("gn7e is not region-limited: %v", codes(c.Findings))
		}
	}
}
