package provider_test

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

const testJoinToken = "abcdef.0123456789abcdef"

// clusterPoolsConfig is a control plane and a GPU worker pool that joins it, with the node
// bootstrap rendered by the provider and the user's own user_data after it.
func clusterPoolsConfig(token string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "control" {
  name          = "control"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  instance_type = "ecs.g7.2xlarge"
  size          = 1
  kubernetes = {
    role        = "control_plane"
    join_token  = %[1]q
    pod_subnet  = "10.244.0.0/16"
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
    api_endpoint = "${gpucluster_node_pool.control.nodes[0].private_ip}:6443"
    join_token   = %[1]q
    labels       = { "example.org/team" = "cfd" }
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
				Config: emu.Config() + poolNetworkConfig("") + clusterPoolsConfig(testJoinToken),
				ConfigStateChecks: []statecheck.StateCheck{
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
					checkUserData(emu, "gpucluster_node_pool.control", []string{"#cloud-config", "kubeadm", "InitConfiguration", "10.244.0.0/16"}, []string{"JoinConfiguration"}),
					checkUserData(emu, "gpucluster_node_pool.workers", []string{"JoinConfiguration", ":6443", "/mnt/warm", "example.org/team", "nvidia.com/gpu", "NCCL_", "user-part-ran"}, []string{"InitConfiguration"}),
					checkTokenOnlyInSensitiveAttribute(testJoinToken),
				),
			},
		},
	})
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
		req := ecs.CreateDescribeUserDataRequest()
		req.RegionId = acctest.Region
		req.InstanceId = id
		resp, err := emulatorECS(emu).DescribeUserData(req)
		if err != nil {
			return fmt.Errorf("DescribeUserData %s: %w", id, err)
		}
		raw, err := base64.StdEncoding.DecodeString(resp.UserData)
		if err != nil {
			return fmt.Errorf("user data of %s is not Base64: %w", id, err)
		}
		doc := string(raw)
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
