package provider_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

const testJoinToken = "abcdef.0123456789abcdef"

// clusterPoolsConfig is a highly available control plane (a first pool of 1 that runs kubeadm
// init with the provider-made CA, a joining pool of 2, both behind the endpoint's load balancer)
// and a GPU worker pool that joins it pinning the CA, with the node bootstrap rendered by the
// provider and the user's own user_data after it.
func clusterPoolsConfig(token string) string {
	return fmt.Sprintf(`
resource "gpucluster_cluster_ca" "ca" {}

resource "gpucluster_control_plane_endpoint" "api" {
  name       = "api"
  network_id = gpucluster_rdma_network.net.id
}

`+controlPoolConfig(`
    control_plane_init = true
    join_token         = %[1]q
    pod_subnet         = "10.244.0.0/16"
    load_balancer_id   = gpucluster_control_plane_endpoint.api.load_balancer_id
    certificate_key    = gpucluster_cluster_ca.ca.certificate_key
    ca_cert_pem        = gpucluster_cluster_ca.ca.cert_pem
    ca_key_pem         = gpucluster_cluster_ca.ca.private_key_pem
    ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash
    addons             = { "20-hello.yaml" = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: hello\n" }`)+`

resource "gpucluster_node_pool" "control_join" {
  name          = "control-join"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  instance_type = "ecs.g7.2xlarge"
  size          = 2
  kubernetes = {
    role               = "control_plane"
    control_plane_init = false
    join_token         = %[1]q
    load_balancer_id   = gpucluster_control_plane_endpoint.api.load_balancer_id
    certificate_key    = gpucluster_cluster_ca.ca.certificate_key
    ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash
  }
}

resource "gpucluster_node_pool" "workers" {
  name          = "workers"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  size          = 2
  mounts        = ["nas-1.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm nfs vers=3,nolock,proto=tcp,_netdev,nofail 0 0"]
  user_data     = "#!/bin/bash\necho user-part-ran\n"
  kubernetes = {
    api_endpoint    = gpucluster_control_plane_endpoint.api.endpoint
    api_server_name = gpucluster_control_plane_endpoint.api.api_server_name
    join_token      = %[1]q
    ca_cert_hash    = gpucluster_cluster_ca.ca.ca_cert_hash
    labels          = { "example.org/team" = "cfd" }
    host_cuda       = true
    versions        = { kubernetes = "1.33.2" }
    nccl_env        = { NCCL_DEBUG = "WARN" }
  }
}
`, token)
}

func TestAccNodePool_bootstrap(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: emu.Config() + poolNetworkConfig("") + clusterPoolsConfig(testJoinToken) + registrationsConfig("workers", "control", "control_join"),
				ConfigStateChecks: []statecheck.StateCheck{
					// What each pool reports is what its first node's user data registers, read
					// back from ECS by gpucluster_node_registration.
					registeredAsReported("workers", "node_labels", "labels"),
					registeredAsReported("workers", "node_taints", "taints"),
					registeredAsReported("control", "node_labels", "labels"),
					registeredAsReported("control_join", "node_labels", "labels"),
					statecheck.ExpectKnownValue("data.gpucluster_node_registration.control", tfjsonpath.New("taints"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("node-role.kubernetes.io/control-plane:NoSchedule")})),
					statecheck.ExpectKnownValue("data.gpucluster_node_registration.control", tfjsonpath.New("action"), knownvalue.StringExact("init")),
					statecheck.ExpectKnownValue("data.gpucluster_node_registration.control_join", tfjsonpath.New("action"), knownvalue.StringExact("join_control_plane")),
					statecheck.ExpectKnownValue("data.gpucluster_node_registration.workers", tfjsonpath.New("action"), knownvalue.StringExact("join")),
					statecheck.ExpectKnownValue("data.gpucluster_node_registration.workers", tfjsonpath.New("skips_ca_verification"), knownvalue.Bool(false)),
					// A control plane is no GPU node: no GPU labels, no GPU taint.
					statecheck.ExpectKnownValue("gpucluster_node_pool.control", tfjsonpath.New("node_taints"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.control", tfjsonpath.New("node_labels"), knownvalue.MapExact(map[string]knownvalue.Check{
						"gpucluster.io/node-role": knownvalue.StringExact("control-plane"),
						"gpucluster.io/scenario":  knownvalue.StringExact("engineering_simulation"),
						"gpucluster.io/pool":      knownvalue.StringExact("control"),
					})),
					statecheck.ExpectKnownValue("gpucluster_node_pool.workers", tfjsonpath.New("node_taints"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("nvidia.com/gpu:NoSchedule")})),
					statecheck.ExpectKnownValue("gpucluster_node_pool.workers", tfjsonpath.New("node_labels").AtMapKey("example.org/team"), knownvalue.StringExact("cfd")),
					statecheck.ExpectKnownValue("gpucluster_node_pool.workers", tfjsonpath.New("node_labels").AtMapKey("nvidia.com/gpu.product"), knownvalue.StringExact("T4")),
				},
				Check: resource.ComposeTestCheckFunc(
					// Exactly one node runs kubeadm init, with the provider's CA and --upload-certs;
					// it also carries the control-plane join it uses if it replaces a lost first node.
					checkUserData(emu, "gpucluster_node_pool.control", []string{"#cloud-config", "InitConfiguration", "10.244.0.0/16", "--upload-certs",
						"/etc/kubernetes/pki/ca.key", "gpucluster-addons.service", "encoding: gz+b64", "/etc/gpucluster/addons/20-hello.yaml",
						"gpucluster-upload-certs.timer", "certificateKey", "enable --now gpucluster-bootstrap.service", "certSANs",
						bootstrap.APIHostsPath + " self", "gpucluster-api-hosts.service"}, []string{"cuda-toolkit"}),
					checkUserData(emu, "gpucluster_node_pool.control_join", []string{"JoinConfiguration", "certificateKey", "caCertHashes", ":6443",
						bootstrap.APIHostsPath + " lb", bootstrap.APIHostsPath + " self"},
						[]string{"InitConfiguration", "kubeadm init", "unsafeSkipCAVerification", "ca.key"}),
					checkUserData(emu, "gpucluster_node_pool.workers", []string{"JoinConfiguration", ":6443", "/mnt/warm", "example.org/team", "nvidia.com/gpu",
						"NCCL_DEBUG=WARN", "kubelet=1.33.2-1.1", "caCertHashes", "user-part-ran", "cuda-toolkit-11-8", bootstrap.APIHostsPath + " lb"},
						// A T4 type has no NVSwitch: no Fabric Manager; a worker never maps the name to itself.
						[]string{"InitConfiguration", "unsafeSkipCAVerification", "certificateKey", "--provider-id", "gpucluster-spot-interruption", "fabricmanager",
							bootstrap.APIHostsPath + " self"}),
					checkRegisteredAtAPIServerName("workers", "control", "control_join"),
					checkTokenOnlyInSensitiveAttribute(testJoinToken),
					checkBackends(emu, "gpucluster_node_pool.control", "gpucluster_node_pool.control_join"),
				),
			},
		},
	})
}

// checkRegisteredAtAPIServerName fails unless every pool's nodes reach the API at the endpoint's
// API server name (their kubeadm controlPlaneEndpoint or apiServerEndpoint, read back from ECS by
// gpucluster_node_registration): never at the load balancer's address, which the control-plane
// nodes behind it would get no answer from.
func checkRegisteredAtAPIServerName(pools ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ep, ok := s.RootModule().Resources["gpucluster_control_plane_endpoint.api"]
		if !ok {
			return fmt.Errorf("no endpoint in state")
		}
		name := ep.Primary.Attributes["api_server_name"]
		if want := bootstrap.APIServerNameFor(ep.Primary.ID); name != want {
			return fmt.Errorf("the endpoint's api_server_name is %q, want %q", name, want)
		}
		for _, p := range pools {
			got := s.RootModule().Resources["data.gpucluster_node_registration."+p].Primary.Attributes["api_endpoint"]
			if got != name+":6443" {
				return fmt.Errorf("%s registers at %q, want %s:6443", p, got, name)
			}
		}
		return nil
	}
}

// checkBackends fails unless the load balancer's backend servers are the nodes of the pools
// together: two pools share one load balancer without removing each other's nodes.
func checkBackends(emu *acctest.Emulator, pools ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var want []string
		for _, p := range pools {
			ids, err := poolNodeIDs(s, p)
			if err != nil {
				return err
			}
			want = append(want, ids...)
		}
		lbs := emu.Resources().LoadBalancers
		if len(lbs) != 1 {
			return fmt.Errorf("%d load balancers, want 1", len(lbs))
		}
		got := slices.Clone(lbs[0]["backend_server_ids"].([]string))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("backend servers %v, want the nodes of %v: %v", got, pools, want)
		}
		return nil
	}
}

// checkUserData decodes the user data ECS holds for the pool's first node (DescribeUserData)
// and checks what the node bootstrap put there.
func checkUserData(emu *acctest.Emulator, pool string, want, notWant []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[pool]
		if !ok {
			return fmt.Errorf("%s not in state", pool)
		}
		id := rs.Primary.Attributes["nodes.0.id"]
		doc, err := userDataText(emu, id)
		if err != nil {
			return err
		}
		for _, w := range want {
			if !strings.Contains(doc, w) {
				return fmt.Errorf("%s: node %s's user data lacks %q:\n%.2000s", pool, id, w, doc)
			}
		}
		for _, w := range notWant {
			if strings.Contains(doc, w) {
				return fmt.Errorf("%s: node %s's user data should not contain %q", pool, id, w)
			}
		}
		return nil
	}
}

// userDataText is instance id's user data as ECS DescribeUserData answers it, decoded: the
// document and every file it writes (the bootstrap script and the bundle stub's fetch script are
// gz+b64, so a search of the raw document would miss what they say, and a "not in it" would prove
// nothing).
func userDataText(emu *acctest.Emulator, id string) (string, error) {
	req := ecs.CreateDescribeUserDataRequest()
	req.RegionId = acctest.Region
	req.InstanceId = id
	resp, err := emulatorECS(emu).DescribeUserData(req)
	if err != nil {
		return "", fmt.Errorf("DescribeUserData %s: %w", id, err)
	}
	raw, err := base64.StdEncoding.DecodeString(resp.UserData)
	if err != nil {
		return "", fmt.Errorf("user data of %s is not Base64: %w", id, err)
	}
	doc, err := bootstrap.UnpackUserData(string(raw))
	if err != nil {
		return "", fmt.Errorf("user data of %s: %w", id, err)
	}
	files, err := bootstrap.DocumentFiles(doc)
	if err != nil {
		return "", fmt.Errorf("user data of %s: %w", id, err)
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		doc += "\n" + files[p]
	}
	return doc, nil
}

// checkTokenOnlyInSensitiveAttribute fails when the join token shows up in any state attribute
// other than the sensitive kubernetes.join_token.
func checkTokenOnlyInSensitiveAttribute(token string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for name, rs := range s.RootModule().Resources {
			for k, v := range rs.Primary.Attributes {
				if strings.Contains(v, token) && k != "kubernetes.join_token" {
					return fmt.Errorf("the join token is in %s.%s, which is not sensitive", name, k)
				}
			}
		}
		return nil
	}
}

func TestAccNodePool_bootstrapBadToken(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: emu.Config() + poolNetworkConfig("")},
			{
				Config:      emu.Config() + poolNetworkConfig("") + clusterPoolsConfig("not-a-token"),
				ExpectError: regexp.MustCompile(`(?s)kubernetes\.join_token.*not a kubeadm bootstrap token`),
				Check:       checkInstances(emu, 0),
			},
		},
	})
	if got := emu.Stats().Calls["RunInstances"]; got != 0 {
		t.Fatalf("a bad join token reached RunInstances %d times; it must stop the plan", got)
	}
}

// A worker pool that would join without pinning the cluster CA is refused at plan time, naming
// the attribute and the opt-in; with the opt-in it plans, with a warning.
func TestAccNodePool_bootstrapRequiresCAHash(t *testing.T) {
	emu := acctest.StartEmulator(t)
	workers := func(extra string) string {
		return emu.Config() + poolNetworkConfig("") + `
resource "gpucluster_node_pool" "workers" {
  name          = "workers"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  size          = 1
  kubernetes = {
    api_endpoint = "10.20.0.200:6443"
    join_token   = "` + testJoinToken + `"
    ` + extra + `
  }
}
`
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: emu.Config() + poolNetworkConfig("")},
			{
				Config:      workers(""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)kubernetes\.ca_cert_hash is empty.*answers at the API\s+endpoint.*insecure_skip_ca_verification\s+=\s+true`),
			},
			{Config: workers("insecure_skip_ca_verification = true"), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
	if got := emu.Stats().Calls["RunInstances"]; got != 0 {
		t.Fatalf("RunInstances called %d times by plans", got)
	}
}

// With a seeded CA opened through the ephemeral resource and kubernetes.ca_key_pem_wo,
// join_token_wo and certificate_key_wo, the CA key, the join token and the certificate key reach
// the first control-plane node's user data and no plan or state at all.
func TestAccNodePool_caKeyWriteOnly(t *testing.T) {
	emu := acctest.StartEmulator(t)
	ca := acctest.NewSeededCA(t)
	seeded := seededCASecrets(ca)
	t.Setenv("TF_VAR_ca_seed", ca.Seed)
	config := emu.Config() + poolNetworkConfig("") + `
variable "ca_seed" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "gpucluster_cluster_ca" "ca" {
  seed_wo         = var.ca_seed
  seed_wo_version = 1
}

ephemeral "gpucluster_cluster_ca" "ca" {
  seed     = var.ca_seed
  cert_pem = gpucluster_cluster_ca.ca.cert_pem
}

` + controlPoolConfig(`
    api_endpoint       = "10.20.0.10:6443"
    join_token_wo      = ephemeral.gpucluster_cluster_ca.ca.join_token
    ca_cert_pem        = gpucluster_cluster_ca.ca.cert_pem
    ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash
    ca_key_pem_wo      = ephemeral.gpucluster_cluster_ca.ca.private_key_pem
    certificate_key_wo = ephemeral.gpucluster_cluster_ca.ca.certificate_key`)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{absentFromPlan{seeded}},
				PostApplyPostRefresh: []plancheck.PlanCheck{absentFromPlan{seeded}, plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{absentFromState{seeded}},
			Check: checkUserData(emu, "gpucluster_node_pool.control",
				[]string{"/etc/kubernetes/pki/ca.key", strings.Split(ca.KeyPEM, "\n")[1], "InitConfiguration", ca.JoinToken,
					"certificateKey: " + ca.CertificateKey}, nil),
		}},
	})
}

// registrationsConfig reads the registration of each named pool's first node.
func registrationsConfig(pools ...string) string {
	var b strings.Builder
	for _, p := range pools {
		fmt.Fprintf(&b, "\ndata \"gpucluster_node_registration\" %q {\n  instance_id = gpucluster_node_pool.%s.nodes[0].id\n}\n", p, p)
	}
	return b.String()
}

// registeredAsReported: the pool's attribute (node_labels, node_taints) equals what its first
// node registers (the registration's labels, taints).
func registeredAsReported(pool, poolAttr, registrationAttr string) statecheck.StateCheck {
	return statecheck.CompareValuePairs("gpucluster_node_pool."+pool, tfjsonpath.New(poolAttr),
		"data.gpucluster_node_registration."+pool, tfjsonpath.New(registrationAttr), compare.ValuesSame())
}

// controlPoolConfig is the single-node control-plane pool "control" of these tests, with the
// given lines inside its kubernetes block (after role = "control_plane").
func controlPoolConfig(kubernetesLines string) string {
	return `
resource "gpucluster_node_pool" "control" {
  name          = "control"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  instance_type = "ecs.g7.2xlarge"
  size          = 1
  kubernetes = {
    role               = "control_plane"` + kubernetesLines + `
  }
}
`
}
