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

const bootstrapToken = "abcdef.0123456789abcdef"

func TestAccNodeBootstrap_worker(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const config = `
data "gpucluster_node_bootstrap" "worker" {
  role  = "gpu_worker"
  erdma = true
  kubernetes = {
    api_endpoint    = "10.0.0.10:6443"
    api_server_name = "api.lb-1.gpucluster.internal"
    join_token      = "` + bootstrapToken + `"
    ca_cert_hash    = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
    labels          = { "gpucluster.io/scenario" = "ai_training" }
    taints          = [{ key = "gpucluster.io/dedicated", value = "training", effect = "NoExecute" }]
  }
  mounts   = ["0a1b-xyz.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm nfs vers=3,nolock,proto=tcp,_netdev,nofail 0 0"]
  nccl_env  = { NCCL_DEBUG = "WARN" }
  versions  = { kubernetes = "1.30.4" }
  nvswitch  = true
  host_cuda = true
}
`
	ds := "data.gpucluster_node_bootstrap.worker"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("versions"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"driver": knownvalue.StringExact("535.183.01"), "cuda": knownvalue.StringExact("11.8"),
					"nccl": knownvalue.StringExact("2.15.5"), "kubernetes": knownvalue.StringExact("1.30.4"),
				})),
				// Configured nccl_env stays as written (the result merges it over the eRDMA defaults in the document).
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("nccl_env"), knownvalue.MapExact(map[string]knownvalue.Check{"NCCL_DEBUG": knownvalue.StringExact("WARN")})),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("cloud_init"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)^#cloud-config\n.*kubeadm.k8s.io/v1beta3.*JoinConfiguration.*NCCL_DEBUG=WARN.*NCCL_IB_HCA=erdma_0.*`))),
				// host_cuda asks for CUDA and NCCL on the host; nvswitch for Fabric Manager at the driver's version.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("bootstrap_script"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)apt_version nvidia-fabricmanager-535 535\.183\.01.*libnccl2=2\.15\.5-1\+cuda11\.8.*phase driver\nphase fabric-manager\n`))),
				// The worker joins at the API server name, which it maps to api_endpoint's address.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("cloud_init"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)apiServerEndpoint: api\.lb-1\.gpucluster\.internal:6443.*name=api\.lb-1\.gpucluster\.internal\s+lb=10\.0\.0\.10\s`))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("bootstrap_script"), knownvalue.StringRegexp(regexp.MustCompile(
					`/usr/local/sbin/gpucluster-api-hosts lb\n`))),
				// The provider's region (cn-wulanchabu, mainland) picks the in-VPC mirror.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("package_mirror"), knownvalue.StringExact("alibaba_vpc")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("bootstrap_script"), knownvalue.StringRegexp(regexp.MustCompile(
					`http://mirrors\.cloud\.aliyuncs\.com/kubernetes-new/core/stable/v1\.30/deb/`))),
			},
		}},
	})
}

func TestAccNodeBootstrap_controlPlaneDefaults(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const config = `
data "gpucluster_node_bootstrap" "cp" {
  role       = "control_plane"
  kubernetes = { join_token = "` + bootstrapToken + `", pod_subnet = "10.244.0.0/16" }
}
`
	ds := "data.gpucluster_node_bootstrap.cp"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("versions").AtMapKey("kubernetes"), knownvalue.StringExact("1.33")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("nccl_env"), knownvalue.MapSizeExact(0)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("cloud_init"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)InitConfiguration.*node-role.kubernetes.io/control-plane.*kubernetesVersion: v1\.33\.6`))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("bootstrap_script"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)p_init\(\) \{\n  systemctl daemon-reload\n  systemctl enable --now gpucluster-metadata-guard.service\n  kubeadm init --config .*phase init\nphase addons\n`))),
				// cn-wulanchabu (the emulator's region) is in mainland China: kubeadm, containerd
				// and the CNI take their images from the region's default registry.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("kubernetes").AtMapKey("image_registry"), knownvalue.StringExact(mainlandRegistry)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("cloud_init"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)imageRepository: `+regexp.QuoteMeta(mainlandRegistry)+`\n.*/etc/containerd/certs.d/registry.k8s.io/hosts.toml`))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("bootstrap_script"), knownvalue.StringRegexp(regexp.MustCompile(
					`sandbox_image = "`+regexp.QuoteMeta(mainlandRegistry)+`/pause:3.10@sha256:[0-9a-f]{64}`))),
			},
		}},
	})
}

// TestAccNodeBootstrap_errors: each mistake fails at plan time naming the attribute, the value and the fix.
func TestAccNodeBootstrap_errors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	worker := func(kubernetes, extra string) string {
		return emu.Config() + `
data "gpucluster_node_bootstrap" "w" {
  role       = "gpu_worker"
  kubernetes = ` + kubernetes + `
  ` + extra + `
}
`
	}
	steps := []resource.TestStep{
		{Config: worker(`{ api_endpoint = "10.0.0.10:6443", join_token = "Not-A-Token" }`, ""),
			ExpectError: regexp.MustCompile(`(?s)kubernetes.join_token is not a kubeadm bootstrap token.*kubeadm token generate`)},
		{Config: worker(`{ join_token = "`+bootstrapToken+`" }`, ""),
			ExpectError: regexp.MustCompile(`(?s)kubernetes.api_endpoint is required for gpu_worker`)},
		{Config: worker(`{ api_endpoint = "10.0.0.10:6443", join_token = "`+bootstrapToken+`" }`, ""),
			ExpectError: regexp.MustCompile(`(?s)kubernetes.ca_cert_hash is empty.*insecure_skip_ca_verification = true`)},
		{Config: worker(`{ api_endpoint = "10.0.0.10:6443", join_token = "`+bootstrapToken+`", insecure_skip_ca_verification = true, labels = { "node-role.kubernetes.io/gpu" = "" } }`, ""),
			ExpectError: regexp.MustCompile(`(?s)NodeRestriction.*gpucluster.io/gpu`)},
		{Config: worker(`{ api_endpoint = "10.0.0.10:6443", join_token = "`+bootstrapToken+`" }`, `versions = { driver = "470.82.01" }`),
			ExpectError: regexp.MustCompile(`(?s)driver version "470.82.01" is older than the supported minimum\s+510.47.03`)},
		{Config: worker(`{ api_endpoint = "10.0.0.10:6443", join_token = "`+bootstrapToken+`", insecure_skip_ca_verification = true }`, `mounts = ["nas:/ /mnt/warm"]`),
			ExpectError: regexp.MustCompile(`(?s)mounts\[0\].*has 2 fields`)},
		{Config: worker(`{ api_endpoint = "10.0.0.10:6443", join_token = "`+bootstrapToken+`", insecure_skip_ca_verification = true, image_registry = "mirror" }`, ""),
			ExpectError: regexp.MustCompile(`(?s)kubernetes.image_registry "mirror" is not a registry prefix`)},
		{Config: worker(`{ api_endpoint = "k8s.example.org:6443", api_server_name = "api.lb-1.gpucluster.internal", join_token = "`+bootstrapToken+`", insecure_skip_ca_verification = true }`, ""),
			ExpectError: regexp.MustCompile(`(?s)kubernetes.api_endpoint "k8s.example.org:6443" is not IPv4-address:port,\s+which\s+api_server_name\s+needs`)},
		{Config: worker(`{ api_endpoint = "10.0.0.10:6443", join_token = "`+bootstrapToken+`", taints = [{ key = "a", effect = "NoRun" }] }`, ""),
			ExpectError: regexp.MustCompile(`(?s)effect.*value must be one of`)},
	}
	for _, step := range steps {
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheck(t) },
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
			Steps:                    []resource.TestStep{step},
		})
	}
}
