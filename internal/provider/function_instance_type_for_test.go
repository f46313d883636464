package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

func TestAccFunctionInstanceTypeFor(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + `
output "a100_8" {
  value = provider::gpucluster::instance_type_for("A100-80GB", 8)
}
output "h100_8" {
  value = provider::gpucluster::instance_type_for("h100", 8)
}
output "t4_1" {
  value = provider::gpucluster::instance_type_for("NVIDIA T4", 1)
}
output "l20_2" {
  value = provider::gpucluster::instance_type_for("L20", 2)
}
output "a10_8" {
  value = provider::gpucluster::instance_type_for("A10", 8)
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("a100_8", knownvalue.StringExact("ecs.gn7e-c16g1.32xlarge")),
				// H100 is served by the Hopper-class gn8v; the smallest 8-GPU size.
				statecheck.ExpectKnownOutputValue("h100_8", knownvalue.StringExact("ecs.gn8v-8x.16xlarge")),
				statecheck.ExpectKnownOutputValue("t4_1", knownvalue.StringExact("ecs.gn6i-c4g1.xlarge")),
				statecheck.ExpectKnownOutputValue("l20_2", knownvalue.StringExact("ecs.gn8is-2x.8xlarge")),
				// 8 x A10: gn7i-8x.16xlarge (64 vCPU) before gn7i-8x.32xlarge (128 vCPU).
				statecheck.ExpectKnownOutputValue("a10_8", knownvalue.StringExact("ecs.gn7i-8x.16xlarge")),
			},
		}},
	})
	if got := emu.Stats().Total; got != 0 {
		t.Fatalf("the emulator saw %d API calls; instance_type_for must be offline", got)
	}
}

func TestAccFunctionInstanceTypeFor_errors(t *testing.T) {
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
			// Unknown model: names the known ones.
			step(`provider::gpucluster::instance_type_for("B200", 8)`,
				`(?s)Invalid value for "gpu_model" parameter.*unknown GPU model "B200":\s+known\s+models\s+are\s+H100,\s+A100-80GB,\s+Hopper-96GB,\s+A100-40GB.*T4`),
			// GPU count not offered: names the sizes that exist.
			step(`provider::gpucluster::instance_type_for("A100", 3)`,
				`(?s)Invalid value for "gpus_per_node" parameter.*A100 is not offered with 3\s+GPUs\s+per\s+node.*gn7:\s+1,\s+4,\s+8;\s+gn7e:\s+1,\s+2,\s+4,\s+8`),
			step(`provider::gpucluster::instance_type_for("T4", 0)`,
				`(?s)gpus_per_node\s+must\s+be\s+at\s+least\s+1,\s+got\s+0\.\n`),
		},
	})
}

func TestAccFunctionInstanceTypeFor_example(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + exampleConfig(t, "functions/instance_type_for/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("a100_8x", knownvalue.StringExact("ecs.gn7e-c16g1.32xlarge")),
				statecheck.ExpectKnownOutputValue("h100_8x", knownvalue.StringExact("ecs.gn8v-8x.16xlarge")),
			},
		}},
	})
}
