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
				// adapter ConfigMap, HPA, nccl-tests, cross-node all-reduce (ConfigMap, Service, Job); no
				// HPCG for training.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents"), knownvalue.ListSizeExact(17)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents").AtSliceIndex(16).AtMapKey("kind"), knownvalue.StringExact("Job")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents").AtSliceIndex(16).AtMapKey("name"), knownvalue.StringExact("nccl-all-reduce-pool")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("images").AtMapKey("pytorch"), knownvalue.StringExact("nvcr.io/nvidia/pytorch:24.03-py3")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("validation_all_reduce_yaml"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)^apiVersion: v1\s+data:\s+all_reduce.py: .*kind: ConfigMap.*---\n.*kind: Service.*clusterIP: None.*---\n.*kind: Job.*`+
						`completionMode: Indexed\s+completions: 4\s+parallelism: 4.*--nnodes=4 --nproc-per-node=8.*`+
						`name: NCCL_IB_HCA\s+value: erdma_0.*name: NCCL_NET\s+value: IB.*`+
						`name: MASTER_ADDR\s+value: nccl-all-reduce-pool-0.nccl-all-reduce-pool.*nvidia.com/gpu: "8".*`+
						`hostNetwork: true.*subdomain: nccl-all-reduce-pool.*key: nvidia.com/gpu`))),
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
  images             = { reaper = "registry.example.cn/mirror/python:3.12-alpine", pytorch = "registry.example.cn/mirror/pytorch:24.03-py3" }

  min_cross_node_bus_bandwidth_gbs = 9.5
}
`
	ds := "data.gpucluster_kubernetes_manifests.md"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents"), knownvalue.ListSizeExact(17)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("validation_all_reduce_yaml"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)name: nccl-all-reduce-pool\s+namespace: md\s+spec:\s+activeDeadlineSeconds.*completions: 2.*--nnodes=2 --nproc-per-node=4.*name: NCCL_IB_DISABLE\s+value: "1".*`+
						`name: MIN_BUS_BANDWIDTH_GBS\s+value: "9.5".*image: registry.example.cn/mirror/pytorch:24.03-py3`))),
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
		{Config: cfg(`min_cross_node_bus_bandwidth_gbs = -1`), ExpectError: regexp.MustCompile(`(?s)min_cross_node_bus_bandwidth_gbs "-1" is negative`)},
	} {
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheck(t) },
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
			Steps:                    []resource.TestStep{step},
		})
	}
}
