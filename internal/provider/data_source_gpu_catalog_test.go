package provider_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

func TestAccGPUCatalog_filters(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const cfg = `
data "gpucluster_gpu_catalog" "a100_80" {
  gpu_model         = "a100 80gb"
  min_gpu_memory_gb = 80
  min_gpus          = 8
  erdma             = true
}

data "gpucluster_gpu_catalog" "fp64_vms" {
  fp64       = true
  bare_metal = false
  family     = "gn6e"
}

data "gpucluster_gpu_catalog" "h100" {
  gpu_model = "H100"
}

data "gpucluster_gpu_catalog" "control_plane" {
  family = "g7"
}
`
	a100 := "data.gpucluster_gpu_catalog.a100_80"
	h100 := "data.gpucluster_gpu_catalog.h100"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				// A100 80 GB with 8 GPUs and eRDMA: only the bare-metal ebmgn7ex (sccgn7ex has RoCE, not eRDMA).
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("names"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("ecs.ebmgn7ex.32xlarge"),
				})),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("instance_types").AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"family":           knownvalue.StringExact("ebmgn7ex"),
					"vcpu":             knownvalue.Int64Exact(128),
					"memory_gib":       knownvalue.Float64Exact(1024),
					"gpus":             knownvalue.Int64Exact(8),
					"gpu_model":        knownvalue.StringExact("A100-80GB"),
					"gpu_model_stated": knownvalue.Bool(false),
					"gpu_memory_gb":    knownvalue.Int64Exact(80),
					"gpu_memory_mib":   knownvalue.Null(), // the facts give nvidia-smi MiB for gn7e, not ebmgn7ex
					"fp64_usable":      knownvalue.Bool(true),
					"nvlink":           knownvalue.Bool(true),
					"eri":              knownvalue.Bool(true),
					"eri_quantity":     knownvalue.Int64Exact(2),
					"rdma":             knownvalue.StringExact("erdma"),
					"network_gbps":     knownvalue.Float64Exact(160),
					"bare_metal":       knownvalue.Bool(true),
					"scc":              knownvalue.Bool(false),
					"roce_gbps":        knownvalue.Null(),
				})),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("gpu_models"), knownvalue.ListSizeExact(1)),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("gpu_models").AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"name":                 knownvalue.StringExact("A100-80GB"),
					"memory_bandwidth_gbs": knownvalue.Float64Exact(2039),
					"fp64_tflops":          knownvalue.Float64Exact(9.7),
					"tensor_fp16_tflops":   knownvalue.Float64Exact(312),
				})),
				statecheck.ExpectKnownValue(a100, tfjsonpath.New("findings"), knownvalue.ListSizeExact(0)),

				// V100 32 GB has FP64 7.8 TFLOPS: every gn6e size passes fp64 = true.
				statecheck.ExpectKnownValue("data.gpucluster_gpu_catalog.fp64_vms", tfjsonpath.New("names"), knownvalue.ListSizeExact(4)),

				// H100 is served by gn8v / ebmgn8v, with a warning about FP64; the datasheet figures of both models.
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("names"), knownvalue.ListSizeExact(13)),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("instance_types").AtSliceIndex(0).AtMapKey("family"), knownvalue.StringExact("gn8v")),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("instance_types").AtSliceIndex(0).AtMapKey("fp64_usable"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("findings").AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"severity": knownvalue.StringExact("warning"),
					"code":     knownvalue.StringExact("model_substitute"),
					"message":  knownvalue.StringRegexp(regexp.MustCompile(`publishes no FP64 or tensor throughput`)),
				})),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("gpu_models"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("H100"), "fp64_tflops": knownvalue.Float64Exact(34), "offered": knownvalue.Bool(false)}),
					// The vendor states no FP64 for the Hopper-class 96 GB GPU: null, not 0.
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("Hopper-96GB"), "fp64_tflops": knownvalue.Null(), "memory_gb": knownvalue.Int64Exact(96)}),
				})),

				// A CPU family is listed when named.
				statecheck.ExpectKnownValue("data.gpucluster_gpu_catalog.control_plane", tfjsonpath.New("instance_types").AtSliceIndex(0).AtMapKey("gpus"), knownvalue.Int64Exact(0)),
			},
		}},
	})
	if got := emu.Stats().Total; got != 0 {
		t.Fatalf("the emulator saw %d API calls; gpucluster_gpu_catalog must be offline", got)
	}
}

func TestAccGPUCatalog_unknownModel(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + `
data "gpucluster_gpu_catalog" "x" {
  gpu_model = "B200"
}
`,
			ExpectError: regexp.MustCompile(`(?s)Unknown GPU model.*"B200".*known models are H100, A100-80GB,\s+Hopper-96GB, A100-40GB.*T4`),
		}, {
			Config: emu.Config() + `
data "gpucluster_gpu_catalog" "x" {
  family = "gn9"
}
`,
			ExpectError: regexp.MustCompile(`(?s)family.*value must be one of.*"gn7e"`),
		}},
	})
}

// exampleConfig reads an example under examples/ (tfplugindocs layout) so the acceptance tests
// prove the published examples run. A missing file fails the test.
func exampleConfig(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", rel))
	if err != nil {
		t.Fatalf("reading the example: %v", err)
	}
	return string(data)
}

func TestAccGPUCatalog_example(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + exampleConfig(t, "data-sources/gpucluster_gpu_catalog/data-source.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("a100_8x_types", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("ecs.gn7e-c16g1.32xlarge"),
					knownvalue.StringExact("ecs.ebmgn7e.32xlarge"),
					knownvalue.StringExact("ecs.ebmgn7ex.32xlarge"),
					knownvalue.StringExact("ecs.sccgn7ex.32xlarge"),
				})),
				statecheck.ExpectKnownOutputValue("a100_80gb_fp64_tflops", knownvalue.Float64Exact(9.7)),
			},
		}},
	})
}
