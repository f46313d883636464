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
				// ai_training + A100: 8 x A100 80GB with eRDMA at 160 Gbit/s, the only A100 80GB
				// virtualised or eRDMA type that meets the 100 Gbit/s RDMA network target.
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("recommended_instance_type"), knownvalue.StringExact("ecs.ebmgn7ex.32xlarge")),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("why"), knownvalue.ListPartial(map[int]knownvalue.Check{
					0: knownvalue.StringExact("meets every ai_training requirement the catalog measures (3)"),
					3: knownvalue.StringExact("network 160 Gbit/s with eRDMA (target >= 100 Gbit/s with RDMA): met"),
				})),
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

				// H100 maps to gn8v with a warning that the vendor publishes no throughput for it; of its
				// 8-GPU sizes only gn8v-8x.48xlarge (and the bare-metal ebmgn8v) meet 100 Gbit/s.
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("recommended_instance_type"), knownvalue.StringExact("ecs.gn8v-8x.48xlarge")),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("candidates").AtSliceIndex(0).AtMapKey("enable_erdma"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("findings"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"severity": knownvalue.StringExact("warning"),
						"code":     knownvalue.StringExact("model_substitute"),
						"message":  knownvalue.StringRegexp(regexp.MustCompile(`gn8v.*publishes no FP64 or tensor throughput`)),
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

// The region's own answer decides what is offered: with ebmgn7ex sold out in every zone,
// gpucluster_instance_types leaves it out of names and the scenario falls back to the next
// candidate, saying so in findings and why.
func TestAccScenario_regionFallback(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const soldOut = "ecs.ebmgn7ex.32xlarge"
	emu.SetCapacity(map[string]map[string]int{acctest.Region + "-a": {soldOut: 0}, acctest.Region + "-b": {soldOut: 0}, acctest.Region + "-c": {soldOut: 0}})
	const cfg = `
data "gpucluster_instance_types" "in_stock" {
  gpu_model     = "A100-80GB"
  in_stock_only = true
}

data "gpucluster_scenario" "training" {
  name                   = "ai_training"
  offered_instance_types = data.gpucluster_instance_types.in_stock.names
}
`
	tr := "data.gpucluster_scenario.training"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("recommended_instance_type"), knownvalue.StringExact("ecs.sccgn7ex.32xlarge")),
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("findings"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"severity": knownvalue.StringExact("warning"),
						"code":     knownvalue.StringExact("region_fallback"),
						"message":  knownvalue.StringRegexp(regexp.MustCompile(`ebmgn7ex\.32xlarge, is not sold in .*falls back to sccgn7ex\.32xlarge`)),
					}),
				})),
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("why"), knownvalue.ListPartial(map[int]knownvalue.Check{
					0: knownvalue.StringRegexp(regexp.MustCompile(`does not sell the first choice ebmgn7ex\.32xlarge; falling back to sccgn7ex\.32xlarge`)),
					4: knownvalue.StringExact("network 800 Gbit/s with RoCE (SCC) (target >= 100 Gbit/s with RDMA): met"),
				})),
				// Only what the region has in stock: the A100 80GB types but ebmgn7ex.
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("candidates"), knownvalue.ListSizeExact(6)),
			},
		}},
	})
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
`, `(?s)Unknown GPU model.*"MI300X".*known models are H100, A100-80GB,\s+Hopper-96GB, A100-40GB, L20, A40, A10, A30, V100S, V100-32GB,\s+V100-16GB, T4`),
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
`, `(?s)no instance type fits ai_training with T4.*needs at least 80 GB\s+per GPU.*families that fit: ebmgn7ex.*Use a family\s+with enough GPU memory`),
			// A region that sells none of the types that fit: the error names the argument.
			step(`
data "gpucluster_scenario" "x" {
  name                   = "ai_training"
  offered_instance_types = ["ecs.gn6i-c4g1.xlarge", "ecs.gn7i-c8g1.2xlarge"]
}
`, `(?s)offered_instance_types.*sells\s+none\s+of\s+the\s+20\s+types\s+that\s+fit\s+ai_training\s+\(first\s+choice\s+ebmgn7ex\.32xlarge\)`),
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
