package catalog

import (
	"errors"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr/planerrtest"
)

// Every error about the user's input names the attribute it is about, as data. Disk errors are
// relative to the disk block; the rest to the node pool (or the data source or function argument
// of the same name).
func TestErrorsNameTheAttribute(t *testing.T) {
	sel := func(r SelectRequest) error { _, _, err := Select(r); return err }
	for _, tc := range []struct {
		name     string
		err      error
		sentinel error
		path     string
		value    string
	}{
		{"unknown ESSD level", CheckDisk(DiskCategoryESSD, "PL9", 100), ErrInvalidDisk, "performance_level", "PL9"},
		{"ESSD below its level's minimum", CheckDisk(DiskCategoryESSD, "PL3", 100), ErrInvalidDisk, "size_gib", "100"},
		{"ESSD size zero", CheckDisk(DiskCategoryESSD, "PL0", 0), ErrInvalidDisk, "size_gib", "0"},
		{"ESSD above the maximum", CheckDisk(DiskCategoryESSD, "PL1", 70_000), ErrInvalidDisk, "size_gib", "70000"},
		{"AutoPL with a level", CheckDisk(DiskCategoryAutoPL, "PL1", 100), ErrInvalidDisk, "performance_level", "PL1"},
		{"AutoPL too large", CheckDisk(DiskCategoryAutoPL, "", 70_000), ErrInvalidDisk, "size_gib", "70000"},
		{"ephemeral with a level", CheckDisk(DiskCategoryEphemeralStandard, "PL1", 100), ErrInvalidDisk, "performance_level", "PL1"},
		{"ephemeral too small", CheckDisk(DiskCategoryEphemeralPremium, "", 10), ErrInvalidDisk, "size_gib", "10"},
		{"unknown category", CheckDisk("floppy", "", 1), ErrInvalidDisk, "category", "floppy"},
		{"unknown scenario", func() error { _, err := LookupScenario("astrology"); return err }(), ErrUnknownScenario, "scenario", "astrology"},
		{"unknown scenario in Select", sel(SelectRequest{Scenario: "astrology"}), ErrUnknownScenario, "scenario", "astrology"},
		{"unknown size of a family", func() error { _, err := ParseInstanceType("ecs.gn7i-c99g1.huge"); return err }(), ErrUnknownInstanceType, "instance_type", "ecs.gn7i-c99g1.huge"},
		{"unknown family", func() error { _, err := ParseInstanceType("ecs.zz9.large"); return err }(), ErrUnknownInstanceType, "instance_type", "ecs.zz9.large"},
		{"unknown GPU model", func() error { _, err := ParseGPUModel("Voodoo5"); return err }(), ErrUnknownGPUModel, "gpu_model", "Voodoo5"},
		{"unknown GPU model via MapGPUModel", func() error { _, err := MapGPUModel("Voodoo5"); return err }(), ErrUnknownGPUModel, "gpu_model", "Voodoo5"},
		{"unknown GPU model in Select", sel(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "Voodoo5"}), ErrUnknownGPUModel, "gpu_model", "Voodoo5"},
		{"negative GPUs per node", sel(SelectRequest{Scenario: ScenarioAITraining, GPUsPerNode: -1}), ErrGPUCountNotOffered, "gpus_per_node", "-1"},
		{"GPU count not offered", sel(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "T4", GPUsPerNode: 3}), ErrGPUCountNotOffered, "gpus_per_node", "3"},
		{"GPU count not offered (InstanceTypeFor)", func() error { _, err := InstanceTypeFor("T4", 3); return err }(), ErrGPUCountNotOffered, "gpus_per_node", "3"},
		{"no type passes the filters", sel(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "A30", RequireBareMetal: true}), ErrNoCandidate, "gpu_model", "A30"},
		{"no type meets the scenario", sel(SelectRequest{Scenario: ScenarioAITraining, GPUModel: "T4"}), ErrNoCandidate, "gpu_model", "T4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.sentinel) {
				t.Fatalf("want an error wrapping %v, got %v", tc.sentinel, tc.err)
			}
			planerrtest.AssertAttribute(t, tc.err, tc.path, tc.value)
		})
	}
}
