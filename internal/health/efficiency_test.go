package health

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

func TestParallelEfficiencyTarget(t *testing.T) {
	cases := []struct {
		scenario string
		min      float64
		set      bool
	}{
		{catalog.ScenarioMolecularDynamics, 0.9, true},
		{"molecular-dynamics", 0.9, true},
		{catalog.ScenarioEngineeringSimulation, 0, false},
		{catalog.ScenarioAITraining, 0, false},
	}
	for _, c := range cases {
		got, err := ParallelEfficiencyTarget(c.scenario)
		if err != nil {
			t.Fatalf("%s: %v", c.scenario, err)
		}
		if got.Min != c.min || got.Set != c.set {
			t.Errorf("%s: %+v, want min %g set %v", c.scenario, got, c.min, c.set)
		}
	}
	if _, err := ParallelEfficiencyTarget("weather"); err == nil {
		t.Error("an unknown scenario has a target")
	}
}

func TestParallelEfficiency(t *testing.T) {
	md, err := ParallelEfficiencyTarget(catalog.ScenarioMolecularDynamics)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		baseNodes   int
		baseSeconds float64
		nodes       int
		seconds     float64
		want        float64
		meets       bool
	}{
		{1, 1000, 4, 250, 1, true},      // perfect scaling
		{1, 1000, 4, 270, 0.9259, true}, // 92.6%
		{1, 1000, 4, 280, 0.8929, false},
		{2, 600, 8, 160, 0.9375, true}, // against a 2-node baseline
		{1, 1000, 1, 1000, 1, true},
	}
	for _, c := range cases {
		e, err := ParallelEfficiency(c.baseNodes, c.baseSeconds, c.nodes, c.seconds)
		if err != nil {
			t.Fatal(err)
		}
		if e < c.want-1e-4 || e > c.want+1e-4 || md.Meets(e) != c.meets {
			t.Errorf("%d nodes %gs vs %d nodes %gs: efficiency %.4f meets %v, want %.4f %v", c.nodes, c.seconds, c.baseNodes, c.baseSeconds, e, md.Meets(e), c.want, c.meets)
		}
	}
	for _, bad := range [][4]float64{{0, 1, 1, 1}, {1, 0, 1, 1}, {1, 1, 0, 1}, {1, 1, 1, -1}} {
		if _, err := ParallelEfficiency(int(bad[0]), bad[1], int(bad[2]), bad[3]); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if none := (EfficiencyTarget{}); !none.Meets(0.1) {
		t.Error("a scenario without a target fails a run")
	}
}
