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

func TestAccKubernetesManifests_training(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const config = `
data "gpucluster_kubernetes_manifests" "training" {
  scenario      = "ai_training"
  node_count    = 4
  gpus_per_node = 8
  erdma         = true
  hpa           = { deployment = "inference", min_replicas = 1, max_replicas = 4 }
}
`
	ds := "data.gpucluster_kubernetes_manifests.training"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("max_runtime"), knownvalue.StringExact("72h")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("images").AtMapKey("device_plugin"), knownvalue.StringExact("nvcr.io/nvidia/k8s-device-plugin:v0.17.0")),
				// 2 namespaces, device plugin, dcgm-exporter + Service, training template, 5 reaper objects,
				// adapter ConfigMap, HPA, nccl-tests; no HPCG for training.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents"), knownvalue.ListSizeExact(14)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents").AtSliceIndex(0).AtMapKey("kind"), knownvalue.StringExact("Namespace")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("yaml"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)kind: HorizontalPodAutoscaler.*name: gpu_utilization.*averageValue: "85"`))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("anti_affinity_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`topologyKey: kubernetes.io/hostname`))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("prometheus_adapter_config"), knownvalue.StringRegexp(regexp.MustCompile(`as: gpu_pool_utilization`))),
			},
		}},
	})
}

func TestAccKubernetesManifests_simulation(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const config = `
data "gpucluster_kubernetes_manifests" "md" {
  scenario           = "molecular_dynamics"
  namespace          = "gpu"
  workload_namespace = "md"
  node_count         = 2
  gpus_per_node      = 4
  max_runtime        = "24h"
  images             = { reaper = "registry.example.cn/mirror/python:3.12-alpine" }
}
`
	ds := "data.gpucluster_kubernetes_manifests.md"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents"), knownvalue.ListSizeExact(14)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("images").AtMapKey("reaper"), knownvalue.StringExact("registry.example.cn/mirror/python:3.12-alpine")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("images").AtMapKey("hpcg"), knownvalue.StringExact("nvcr.io/nvidia/hpc-benchmarks:24.03")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("yaml"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)MAX_RUNTIME_SECONDS\s+value: "86400".*name: hpcg\s+namespace: md`))),
			},
		}},
	})
}

func TestAccKubernetesManifests_errors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cfg := func(extra string) string {
		return emu.Config() + `
data "gpucluster_kubernetes_manifests" "x" {
  scenario      = "ai_training"
  node_count    = 2
  gpus_per_node = 8
  ` + extra + `
}
`
	}
	for _, step := range []resource.TestStep{
		{Config: cfg(`max_runtime = "3 days"`), ExpectError: regexp.MustCompile(`(?s)max_runtime "3 days" is not a Go duration`)},
		{Config: cfg(`max_runtime = "30m"`), ExpectError: regexp.MustCompile(`(?s)max_runtime "30m0s" is under one hour`)},
		{Config: cfg(`hpa = { deployment = "web", min_replicas = 5, max_replicas = 2 }`), ExpectError: regexp.MustCompile(`(?s)hpa "5..2" is not a replica range`)},
		{Config: cfg(`workload_namespace = "GPU_Work"`), ExpectError: regexp.MustCompile(`(?s)workload_namespace "GPU_Work" is not a namespace name`)},
	} {
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheck(t) },
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
			Steps:                    []resource.TestStep{step},
		})
	}
}
