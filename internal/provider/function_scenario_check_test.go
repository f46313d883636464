package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

func TestAccFunctionScenarioCheck(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + `
output "good" {
  value = provider::gpucluster::scenario_check("ai_training", "ecs.gn7e-c16g1.32xlarge", 1)
}
output "too_small" {
  value = provider::gpucluster::scenario_check("ai_training", "gn7i-c8g1.2xlarge", 2)
}
output "md_on_gn8v" {
  value = provider::gpucluster::scenario_check("molecular_dynamics", "ecs.gn8v-8x.48xlarge", 4)
}
output "scc" {
  value = provider::gpucluster::scenario_check("ai_training", "ecs.sccgn7ex.32xlarge", 4)
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("good", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"errors":   knownvalue.ListSizeExact(0),
					"warnings": knownvalue.ListSizeExact(0),
					"info": knownvalue.ListPartial(map[int]knownvalue.Check{
						0: knownvalue.StringRegexp(regexp.MustCompile(`^\[model_not_stated\]: The vendor does not name the GPU of gn7e`)),
					}),
				})),
				// A10 with 24 GB cannot hold ai_training's 80 GB per GPU; two nodes without RDMA.
				statecheck.ExpectKnownOutputValue("too_small", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"errors": knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringRegexp(regexp.MustCompile(`^\[gpu_memory\]: ai_training needs at least 80 GB per GPU; gn7i \(A10\) has 24 GB.*Hint: Use a family with enough GPU memory`)),
					}),
					"warnings": knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringRegexp(regexp.MustCompile(`^\[inter_node_rdma\]`)),
					}),
					"info": knownvalue.ListSizeExact(1),
				})),
				// The Hopper-class GPU's FP64 is not stated: a warning, never a pass.
				statecheck.ExpectKnownOutputValue("md_on_gn8v", knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"errors":   knownvalue.ListSizeExact(0),
					"warnings": knownvalue.ListPartial(map[int]knownvalue.Check{0: knownvalue.StringRegexp(regexp.MustCompile(`^\[fp64\]`))}),
				})),
				// SCC is checked as the provider deploys it: with an HPC cluster, so no hpc_cluster_required error.
				statecheck.ExpectKnownOutputValue("scc", knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"errors": knownvalue.ListSizeExact(0),
				})),
			},
		}},
	})
}

func TestAccFunctionScenarioCheck_errors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	step := func(call, want string) resource.TestStep {
		return resource.TestStep{
			Config:      emu.Config() + "output \"x\" {\n  value = " + call + "\n}\n",
			ExpectError: regexp.MustCompile(want),
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{
			step(`provider::gpucluster::scenario_check("weather", "ecs.gn7e-c16g1.32xlarge", 1)`,
				`(?s)Invalid value for "scenario" parameter.*known scenarios are ai_training,\s+molecular_dynamics,\s+engineering_simulation`),
			step(`provider::gpucluster::scenario_check("ai_training", "ecs.gn7e-c16g1.64xlarge", 1)`,
				`(?s)Invalid value for "instance_type" parameter.*family gn7e has\s+ecs.gn7e-c16g1.4xlarge,`),
			step(`provider::gpucluster::scenario_check("ai_training", "ecs.gn7e-c16g1.32xlarge", 0)`,
				`(?s)Invalid value for "node_count" parameter.*node_count\s+must\s+be\s+at\s+least\s+1,\s+got\s+0\.\n`),
		},
	})
}

func TestAccFunctionScenarioCheck_example(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + exampleConfig(t, "functions/scenario_check/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				// gn7e over 4 nodes has no RDMA between them: a warning, no error.
				statecheck.ExpectKnownOutputValue("training_warnings", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringRegexp(regexp.MustCompile(`^\[inter_node_rdma\]`)),
				})),
			},
		}},
	})
}
