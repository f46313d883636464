package provider_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// mainlandRegistry is image_registry's default in the emulator's region, cn-wulanchabu.
const mainlandRegistry = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"

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
				// The emulator's region, cn-wulanchabu, is in mainland China: every image comes from the
				// region's default registry, pinned by digest where the table has one.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("image_registry"), knownvalue.StringExact(mainlandRegistry)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("images").AtMapKey("device_plugin"), knownvalue.StringExact(
					mainlandRegistry+"/k8s-device-plugin:v0.17.0@"+images.Get(images.DevicePlugin).Digest)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("pinned_images"), knownvalue.ListSizeExact(len(images.All()))),
				// 2 namespaces, device plugin, dcgm-exporter + Service, training template, 5 reaper objects,
				// adapter ConfigMap, HPA, nccl-tests, cross-node all-reduce (ConfigMap, Service, Job); no
				// HPCG for training.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents"), knownvalue.ListSizeExact(17)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents").AtSliceIndex(16).AtMapKey("kind"), knownvalue.StringExact("Job")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("documents").AtSliceIndex(16).AtMapKey("name"), knownvalue.StringExact("nccl-all-reduce-pool")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("images").AtMapKey("pytorch"), knownvalue.StringExact(mainlandRegistry+"/pytorch:24.03-py3")),
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
  image_registry     = "" # the upstream registries, in a mainland region too
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

// addonsDecoder strictly decodes add-on documents into their registered Go types (k8s.io/api and
// the APIService of k8s.io/kube-aggregator): an unknown kind or field fails.
func addonsDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, rbacv1.AddToScheme,
		autoscalingv2.AddToScheme, apiregv1.AddToScheme, admissionv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme, scheme, k8sjson.SerializerOptions{Yaml: true, Strict: true})
}

// checkAddons checks the addons map in state: exactly the wanted file names, and every document
// of every file decodes strictly.
func checkAddons(t *testing.T, ds string, want []string) resource.TestCheckFunc {
	dec := addonsDecoder(t)
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[ds]
		if !ok {
			return fmt.Errorf("%s not in state", ds)
		}
		var got []string
		for k, v := range rs.Primary.Attributes {
			name, ok := strings.CutPrefix(k, "addons.")
			if !ok || name == "%" {
				continue
			}
			got = append(got, name)
			for i, doc := range strings.Split(v, "---\n") {
				// The MPIJob CRD (apiextensions, not in this scheme) is checked by internal/manifests
				// and established by the API server in internal/clustertest.
				if strings.Contains(doc, "\nkind: CustomResourceDefinition\n") {
					continue
				}
				// Kueue's own kinds: decoded into Kueue's types by tools/manifestcheck.
				if strings.HasPrefix(doc, "apiVersion: kueue.x-k8s.io/") {
					continue
				}
				if _, gvk, err := dec.Decode([]byte(doc), nil, nil); err != nil {
					return fmt.Errorf("addons[%q] document %d (%v): %w", name, i, gvk, err)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("addons files %v, want %v", got, want)
		}
		return nil
	}
}

func TestAccKubernetesManifests_addons(t *testing.T) {
	emu := acctest.StartEmulator(t)
	base := []string{"00-namespaces.yaml", "10-device-plugin.yaml", "20-dcgm-exporter.yaml", "30-monitoring.yaml", "40-reaper.yaml", "45-workloads.yaml"}
	for _, tc := range []struct {
		validation string
		want       []string
		// check is what else the case asks of the data source's attributes (name -> value).
		check func(attrs map[string]string) error
	}{
		{"", base, nil},
		{"addons_validation = true", append(slices.Clone(base), "50-validation.yaml"), nil},
		// For a bundled control-plane pool: the MPI Operator with its CRD, last.
		{"addons_mpi_operator = true", append(slices.Clone(base), "60-mpi-operator.yaml"), nil},
		// For a bundled control-plane pool: the GPU health agent after dcgm-exporter, in the
		// add-ons' registry.
		{"addons_gpu_health_agent = true", []string{"00-namespaces.yaml", "10-device-plugin.yaml", "20-dcgm-exporter.yaml",
			"25-gpu-health-agent.yaml", "30-monitoring.yaml", "40-reaper.yaml", "45-workloads.yaml"}, func(attrs map[string]string) error {
			if !strings.Contains(attrs["addons.25-gpu-health-agent.yaml"], "image: registry.example.cn/mirror/gpu-health-agent:") {
				return fmt.Errorf("25-gpu-health-agent.yaml does not pull the agent from image_registry")
			}
			return nil
		}},
		// Kueue with the queues of mpi's pools and teams, last: the file ends with the very
		// configuration and queues mpi.queues_yaml renders (team chem's, not a default team's).
		{"addons_kueue = true\n  mpi = { pools = { md = { node_count = 2, gpus_per_node = 8 } }, teams = { chem = { gpus = 8 } } }",
			append(slices.Clone(base), "65-kueue.yaml"), func(attrs map[string]string) error {
				kueue, queues := attrs["addons.65-kueue.yaml"], attrs["mpi.queues_yaml"]
				if !strings.Contains(queues, "name: chem\n") || !strings.HasSuffix(kueue, "---\n"+queues) {
					return fmt.Errorf("65-kueue.yaml does not end with mpi.queues_yaml, team chem's queues:\n%s", queues)
				}
				return nil
			}},
	} {
		ds := "data.gpucluster_kubernetes_manifests.md"
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheck(t) },
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
			Steps: []resource.TestStep{{
				Config: emu.Config() + `
data "gpucluster_kubernetes_manifests" "md" {
  scenario      = "molecular_dynamics"
  node_count    = 2
  gpus_per_node  = 8
  image_registry = "registry.example.cn/mirror"
  hpa            = { deployment = "inference", min_replicas = 1, max_replicas = 4 }
  ` + tc.validation + `
}
`,
				Check: resource.ComposeTestCheckFunc(checkAddons(t, ds, tc.want), func(s *terraform.State) error {
					if rs := s.RootModule().Resources[ds]; tc.check != nil && rs != nil {
						return tc.check(rs.Primary.Attributes)
					}
					return nil
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("addons").AtMapKey("30-monitoring.yaml"), knownvalue.StringRegexp(regexp.MustCompile(
						`(?s)scenario: molecular_dynamics.*kind: Deployment.*image: registry.example.cn/mirror/prometheus:v2.55.1@sha256:.*name: v1beta1.custom.metrics.k8s.io`))),
				},
			}},
		})
	}
}

// TestAccKubernetesManifests_kueueNeedsMPI: Kueue's queues come from mpi; without it the plan
// fails on addons_kueue with what to set.
func TestAccKubernetesManifests_kueueNeedsMPI(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + `
data "gpucluster_kubernetes_manifests" "k" {
  scenario      = "molecular_dynamics"
  node_count    = 2
  gpus_per_node = 8
  addons_kueue  = true
}
`,
			ExpectError: regexp.MustCompile(`(?s)addons_kueue.*needs mpi.*set mpi = `),
		}},
	})
}

// TestAccKubernetesManifests_imageRegistry: the mainland default warns with what to create and
// sync; every image of every output is in the registry; a malformed registry is an error on the
// attribute.
func TestAccKubernetesManifests_imageRegistry(t *testing.T) {
	emu := acctest.StartEmulator(t)
	ds := "data.gpucluster_kubernetes_manifests.r"
	config := func(registry string) string {
		return emu.Config() + `
data "gpucluster_kubernetes_manifests" "r" {
  scenario          = "engineering_simulation"
  node_count        = 2
  gpus_per_node     = 8
  addons_validation = true
  ` + registry + `
  cluster_autoscaler = { node_groups = [{ name = "burst", scaling_group_id = "asg-0123456789abcdef", min_size = 0, max_size = 4 }] }
  mpi                = { pools = { sim = { node_count = 2, gpus_per_node = 8 } } }
}
`
	}
	upstream := regexp.MustCompile(`(?m)image: .*(docker\.io|registry\.k8s\.io|gcr\.io|ghcr\.io|quay\.io|nvcr\.io)`)
	noUpstream := func(s *terraform.State) error {
		attrs := s.RootModule().Resources[ds].Primary.Attributes
		n := 0
		for k, v := range attrs {
			if strings.Contains(v, "image:") {
				n++
				if m := upstream.FindString(v); m != "" {
					return fmt.Errorf("%s names a public registry: %s", k, m)
				}
			}
		}
		if n == 0 {
			return fmt.Errorf("no attribute names an image")
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{
			{
				Config: config(""),
				Check:  noUpstream,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("image_registry"), knownvalue.StringExact(mainlandRegistry)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("pinned_images").AtSliceIndex(0), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"name": knownvalue.StringExact(images.Flannel), "upstream": knownvalue.StringExact("ghcr.io/flannel-io/flannel"),
						"tag": knownvalue.StringExact("v0.27.4"), "digest": knownvalue.StringExact(images.Get(images.Flannel).Digest),
						"digest_source": knownvalue.StringExact(images.Get(images.Flannel).DigestSource),
						"reference":     knownvalue.StringExact(mainlandRegistry + "/flannel:v0.27.4@" + images.Get(images.Flannel).Digest),
					})),
				},
			},
			{
				Config: config(`image_registry = "example-registry-vpc.cn-wulanchabu.cr.aliyuncs.com/ml"`),
				Check:  noUpstream,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("addons").AtMapKey("30-monitoring.yaml"), knownvalue.StringRegexp(regexp.MustCompile(
						regexp.QuoteMeta("image: example-registry-vpc.cn-wulanchabu.cr.aliyuncs.com/ml/grafana:11.3.0@"+images.Get(images.Grafana).Digest+"\n")))),
				},
			},
			{
				Config:      config(`image_registry = "https://example.cn/ml"`),
				ExpectError: regexp.MustCompile(`(?s)image_registry "https://example.cn/ml" has a scheme`),
			},
		},
	})
}
