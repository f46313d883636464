package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		typ      string
		opts     CheckOptions
		want     []string // severity:code, in order
	}{
		// The examples.
		{"ai_training on 24 GB GPUs", ScenarioAITraining, "gn7i-c32g1.32xlarge", CheckOptions{}, []string{"error:gpu_memory", "warning:gpu_interconnect"}},
		{"molecular_dynamics on gn7i", ScenarioMolecularDynamics, "ecs.gn7i-c8g1.2xlarge", CheckOptions{}, []string{"warning:memory_bandwidth", "warning:fp64"}},
		{"multi-node ai_training without RDMA", ScenarioAITraining, "gn7e-c16g1.32xlarge", CheckOptions{Nodes: 4}, []string{"warning:inter_node_rdma", "info:model_not_stated"}},
		{"sccgn7ex without HPC cluster", ScenarioAITraining, "sccgn7ex.32xlarge", CheckOptions{Nodes: 2}, []string{"error:hpc_cluster_required", "info:model_not_stated"}},
		{"sccgn7ex with HPC cluster", ScenarioAITraining, "sccgn7ex.32xlarge", CheckOptions{Nodes: 2, HPCCluster: true}, []string{"info:model_not_stated"}},
		// Deployment errors.
		{"eRDMA without ERI", ScenarioEngineeringSimulation, "gn6e-c12g1.3xlarge", CheckOptions{ERDMA: true}, []string{"error:erdma_unsupported", "info:ecc", "info:stability"}},
		{"eRDMA on SCC (RoCE only)", ScenarioAITraining, "sccgn7ex.32xlarge", CheckOptions{ERDMA: true, HPCCluster: true}, []string{"error:erdma_unsupported", "info:model_not_stated"}},
		{"spot in low-latency set", ScenarioAITraining, "gn8v-8x.48xlarge", CheckOptions{Spot: true, LowLatencyPlacement: true}, []string{"error:spot_low_latency", "info:model_not_stated", "info:region_limited"}},
		{"low-latency set over 20 nodes", ScenarioAITraining, "gn8v-8x.48xlarge", CheckOptions{Nodes: 21, ERDMA: true, LowLatencyPlacement: true}, []string{"error:low_latency_limit", "info:model_not_stated", "info:region_limited"}},
		{"eRDMA capable but off", ScenarioMolecularDynamics, "ebmgn7ex.32xlarge", CheckOptions{Nodes: 2}, []string{"warning:erdma_disabled", "info:model_not_stated"}},
		{"eRDMA on", ScenarioMolecularDynamics, "ebmgn7ex.32xlarge", CheckOptions{Nodes: 2, ERDMA: true}, []string{"info:model_not_stated"}},
		// Scenario shortfalls.
		{"ai_training on L20 x8 (PCIe)", ScenarioAITraining, "gn8is-8x.32xlarge", CheckOptions{}, []string{"error:gpu_memory", "warning:gpu_interconnect", "info:region_limited"}},
		{"ai_training on ebmgn7 (NVLink not stated)", ScenarioAITraining, "ebmgn7.26xlarge", CheckOptions{}, []string{"error:gpu_memory", "warning:gpu_interconnect", "info:model_not_stated"}},
		{"ai_training on V100 x8 (300 GB/s NVLink)", ScenarioAITraining, "gn6e-c12g1.24xlarge", CheckOptions{}, []string{"error:gpu_memory", "warning:gpu_interconnect"}},
		{"ai_training on a single GPU", ScenarioAITraining, "gn8v.4xlarge", CheckOptions{}, []string{"info:model_not_stated", "info:region_limited", "info:single_gpu"}},
		{"ai_training on A30 x2 (link not stated)", ScenarioAITraining, "gn7s-c32g1.16xlarge", CheckOptions{}, []string{"error:gpu_memory", "warning:not_recommended", "warning:gpu_interconnect"}},
		{"molecular_dynamics on Hopper", ScenarioMolecularDynamics, "ebmgn8v.48xlarge", CheckOptions{Nodes: 8, ERDMA: true}, []string{"warning:fp64", "info:model_not_stated", "info:region_limited"}},
		{"molecular_dynamics on T4 multi-node", ScenarioMolecularDynamics, "gn6i-c4g1.xlarge", CheckOptions{Nodes: 2}, []string{"warning:memory_bandwidth", "warning:fp64", "warning:inter_node_rdma"}},
		{"engineering_simulation on T4", ScenarioEngineeringSimulation, "gn6i-c4g1.xlarge", CheckOptions{Nodes: 2}, []string{"warning:fp64", "info:ecc", "info:stability"}},
		{"engineering_simulation on gn7", ScenarioEngineeringSimulation, "gn7-c12g1.3xlarge", CheckOptions{}, []string{"info:model_not_stated", "info:ecc", "info:stability"}},
		// CPU types.
		{"GPU scenario on a CPU type", ScenarioAITraining, "g7.xlarge", CheckOptions{}, []string{"error:no_gpu"}},
		{"control plane, no scenario", "", "ecs.c7.2xlarge", CheckOptions{Nodes: 3}, nil},
		{"control plane on an eRDMA network", "", "g7.2xlarge", CheckOptions{ERDMA: true, LowLatencyPlacement: true}, nil},
		{"control plane spot in low-latency set", "", "c7.xlarge", CheckOptions{Spot: true, LowLatencyPlacement: true}, []string{"error:spot_low_latency"}},
	}
	fs, _ := Check(ScenarioAITraining, "ebmgn7.26xlarge", CheckOptions{})
	if i := slices.IndexFunc(fs, func(f Finding) bool { return f.Code == CodeGPULink }); i < 0 || !strings.Contains(fs[i].Measured, "NVLink not stated for ebmgn7") {
		t.Errorf("ebmgn7: the vendor is silent on NVLink and the finding must say so, not claim there is none: %v", fs)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := Check(tt.scenario, tt.typ, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := codes(fs); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			for _, f := range fs {
				if f.Message == "" || (f.Severity != SeverityInfo && f.Hint == "") || f.String() == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
		})
	}
}

func TestCheckMeasuredValues(t *testing.T) {
	fs, _ := Check(ScenarioMolecularDynamics, "gn7i-c8g1.2xlarge", CheckOptions{})
	if !strings.Contains(fs[0].Measured, "600 GB/s") || !strings.Contains(fs[0].Requirement, "1,000 GB/s") {
		t.Errorf("bandwidth finding: %+v", fs[0])
	}
	if !strings.Contains(fs[1].Measured, "0.98") {
		t.Errorf("fp64 finding: %+v", fs[1])
	}
	fs, _ = Check(ScenarioAITraining, "gn7i-c8g1.2xlarge", CheckOptions{})
	if fs[0].Requirement != ">= 80 GB per GPU" || !strings.Contains(fs[0].Measured, "24 GB") {
		t.Errorf("memory finding: %+v", fs[0])
	}
	fs, _ = Check(ScenarioEngineeringSimulation, "gn8v.4xlarge", CheckOptions{})
	if !strings.Contains(fs[0].Message, "far below H100") || !strings.Contains(fs[0].Measured, "not stated") {
		t.Errorf("Hopper FP64 must be reported as not stated, far below H100: %+v", fs[0])
	}
}

func TestCheckErrors(t *testing.T) {
	if _, err := Check("ai", "gn7e-c16g1.4xlarge", CheckOptions{}); !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("unknown scenario: %v", err)
	}
	if _, err := Check(ScenarioAITraining, "gn9.huge", CheckOptions{}); !errors.Is(err, ErrUnknownInstanceType) {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := LookupScenario("Molecular-Dynamics"); err != nil {
		t.Errorf("scenario lookup should fold case and dashes: %v", err)
	}
}

func TestWorst(t *testing.T) {
	if Worst(nil) != "" || Worst([]Finding{{Severity: SeverityInfo}, {Severity: SeverityWarning}}) != SeverityWarning {
		t.Error("Worst")
	}
}
