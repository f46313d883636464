package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

func TestAccScenario_aiTraining(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const cfg = `
data "gpucluster_scenario" "a100" {
  name      = "ai_training"
  gpu_model = "A100"
}

data "gpucluster_scenario" "h100" {
  name       = "ai_training"
  gpu_model  = "H100"
  node_count = 4
}

data "gpucluster_scenario" "md" {
  name          = "molecular_dynamics"
  gpu_model     = "A10"
  gpus_per_node = 4
  node_count    = 2
}
`
	a100 := "data.gpucluster_scenario.a100"
	h100 := "data.gpucluster_scenario.h100"
	md := "data.gpucluster_scenario.md"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				// ai_training + A100: an 80 GB A100-class type (gn7e / ebmgn7e family), 8 GPUs.
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("recommended_instance_type"),
					knownvalue.StringRegexp(regexp.MustCompile(`^ecs\.(gn7e|ebmgn7e)[-.]`))),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("candidates").AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"rank":          knownvalue.Int64Exact(1),
					"gpu_model":     knownvalue.StringExact("A100-80GB"),
					"gpu_memory_gb": knownvalue.Int64Exact(80),
					"gpus":          knownvalue.Int64Exact(8),
					"reasons":       knownvalue.ListPartial(map[int]knownvalue.Check{0: knownvalue.StringRegexp(regexp.MustCompile(`meets every ai_training requirement`))}),
				})),
				// The 40 GB gn7 is excluded by the 80 GB minimum: 7 candidates (gn7e x4, ebmgn7e, ebmgn7ex, sccgn7ex).
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("candidates"), knownvalue.ListSizeExact(7)),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("requirements"), knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"min_gpu_memory_gb":       knownvalue.Int64Exact(80),
					"min_gpu_link_gbs":        knownvalue.Float64Exact(400),
					"needs_fp64":              knownvalue.Bool(false),
					"min_fp64_tflops":         knownvalue.Null(),
					"preferred_gpus_per_node": knownvalue.Int64Exact(8),
				})),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("findings").AtSliceIndex(0).AtMapKey("code"), knownvalue.StringExact("series_request")),

				// H100 maps to gn8v with a warning about FP64.
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("recommended_instance_type"), knownvalue.StringExact("ecs.gn8v-8x.16xlarge")),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("candidates").AtSliceIndex(0).AtMapKey("enable_erdma"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("findings"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"severity": knownvalue.StringExact("warning"),
						"code":     knownvalue.StringExact("model_substitute"),
						"message":  knownvalue.StringRegexp(regexp.MustCompile(`gn8v.*FP64 is far below H100`)),
					}),
				})),

				// The scenario's recommended models (A10 for molecular dynamics) is kept usable but never silent.
				// With gpus_per_node = 4 the smallest 4 x A10 size of gn7i's 12 (fewest vCPUs) wins.
				statecheck.ExpectKnownValue(md, tfjsonpath.New("recommended_instance_type"), knownvalue.StringExact("ecs.gn7i-4x.8xlarge")),
				statecheck.ExpectKnownValue(md, tfjsonpath.New("findings"), knownvalue.ListPartial(map[int]knownvalue.Check{
					0: knownvalue.ObjectPartial(map[string]knownvalue.Check{"code": knownvalue.StringExact("matrix_contradiction")}),
				})),
				statecheck.ExpectKnownValue(md, tfjsonpath.New("requirements").AtMapKey("min_fp64_tflops"), knownvalue.Float64Exact(5)),
			},
		}},
	})
	if got := emu.Stats().Total; got != 0 {
		t.Fatalf("the emulator saw %d API calls; gpucluster_scenario must be offline", got)
	}
}

func TestAccScenario_errors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	step := func(body, want string) resource.TestStep {
		return resource.TestStep{Config: emu.Config() + body, ExpectError: regexp.MustCompile(want)}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{
			// Unknown GPU model: the error lists the known ones.
			step(`
data "gpucluster_scenario" "x" {
  name      = "ai_training"
  gpu_model = "MI300X"
}
`, `(?s)Unknown GPU model.*"MI300X".*known models are H100, Hopper-96GB,\s+A100-80GB, A100-40GB, L20, A40, A10, A30, V100S, V100-32GB,\s+V100-16GB, T4`),
			// GPU count not offered: the error lists the sizes that exist.
			step(`
data "gpucluster_scenario" "x" {
  name          = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 3
}
`, `(?s)Selecting instance types for scenario ai_training.*A100 is not offered with 3\s+GPUs per node.*gn7e: 1, 2, 4, 8;.*ebmgn7e: 8`),
			// Nothing fits: T4 has 16 GB where ai_training needs 80 GB; the error names what would fit.
			step(`
data "gpucluster_scenario" "x" {
  name      = "ai_training"
  gpu_model = "T4"
}
`, `(?s)no instance type fits ai_training with T4.*needs at least 80 GB\s+per GPU.*families that fit: gn8v.*Use a family\s+with enough GPU memory`),
			step(`
data "gpucluster_scenario" "x" {
  name = "weather_forecasting"
}
`, `(?s)name.*value must be one of.*"ai_training"`),
		},
	})
}

func TestAccScenario_example(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + exampleConfig(t, "data-sources/gpucluster_scenario/data-source.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				// A100 with eRDMA required: the bare-metal ebmgn7ex (eRDMA) or sccgn7ex (RoCE), 80 GB.
				statecheck.ExpectKnownOutputValue("recommended_instance_type", knownvalue.StringRegexp(regexp.MustCompile(`^ecs\.(ebmgn7ex|sccgn7ex)\.32xlarge$`))),
			},
		}},
	})
}
