package provider_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// poolNetworkConfig is a two-zone network the pools of these tests live in.
func poolNetworkConfig(extra string) string {
	return fmt.Sprintf(`
resource "gpucluster_rdma_network" "net" {
  name        = "pool-net"
  cidr_block  = "10.20.0.0/16"
  zone_ids    = ["cn-wulanchabu-a", "cn-wulanchabu-b"]
  admin_cidrs = ["10.99.0.0/24"]
  %s
}
`, extra)
}

func poolConfig(size int, extra string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  size          = %d
  %s
}
`, size, extra)
}

// emulatorLive counts the emulator's live instances.
func emulatorLive(emu *acctest.Emulator) int {
	return len(emu.Resources().Instances)
}

func checkInstances(emu *acctest.Emulator, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := emulatorLive(emu); got != want {
			return fmt.Errorf("the emulator holds %d instances, want %d", got, want)
		}
		return nil
	}
}

func checkNothingLeft(emu *acctest.Emulator) resource.TestCheckFunc {
	return func(*terraform.State) error {
		r := emu.Resources()
		if n := len(r.Instances) + len(r.Vpcs) + len(r.VSwitches) + len(r.SecurityGroups) + len(r.DeploymentSets) + len(r.HpcClusters); n != 0 {
			return fmt.Errorf("resources left behind after destroy: %+v", r)
		}
		return nil
	}
}

func TestAccNodePool_basicScaleAndImport(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: emu.Config() + poolNetworkConfig("") + poolConfig(3, `tags = { team = "nlp" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// The plan shows the type the catalog picked, before anything is created.
					plancheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("instance_type"), knownvalue.StringRegexp(regexp.MustCompile(`^ecs\.(gn7e|ebmgn7e|ebmgn7ex|sccgn7ex)`))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(3)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes").AtSliceIndex(0).AtMapKey("status"), knownvalue.StringExact("Running")),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(24)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("min_size"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("node_labels").AtMapKey("nvidia.com/gpu.present"), knownvalue.StringExact("true")),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("node_taints").AtSliceIndex(0), knownvalue.StringExact("nvidia.com/gpu=true:NoSchedule")),
				},
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 3),
					resource.TestMatchResourceAttr("gpucluster_node_pool.train", "id", regexp.MustCompile(`^np-[0-9a-f]{12}$`)),
					resource.TestCheckResourceAttrWith("gpucluster_node_pool.train", "estimated_hourly_price", positiveNumber),
				),
			},
			{
				ResourceName:      "gpucluster_node_pool.train",
				ImportState:       true,
				ImportStateVerify: true,
				// Import rebuilds the pool from its nodes' tags; what only the configuration says
				// (how the type was asked for, defaults the plan derives) comes back on the next plan.
				ImportStateVerifyIgnore: []string{"gpu_model", "gpus_per_node", "findings", "node_labels", "node_taints",
					"estimated_hourly_price", "zone_ids", "timeouts", "instance_type_fallback"},
			},
			{
				// Scale up in place: the same pool, more nodes.
				Config: emu.Config() + poolNetworkConfig("") + poolConfig(5, `tags = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(5)),
				},
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 5), checkEveryInstanceTagged(emu, "team", "vision")),
			},
			{
				// Scale down in place: the newest nodes go.
				Config: emu.Config() + poolNetworkConfig("") + poolConfig(2, `tags = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(2)),
				},
				Check: checkInstances(emu, 2),
			},
		},
	})
}

func positiveNumber(v string) error {
	if v == "" || v == "0" || strings.HasPrefix(v, "-") {
		return fmt.Errorf("want a positive price, got %q", v)
	}
	return nil
}

func checkEveryInstanceTagged(emu *acctest.Emulator, key, value string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		client := emulatorECS(emu)
		req := ecs.CreateDescribeInstancesRequest()
		req.MaxResults = "100"
		resp, err := client.DescribeInstances(req)
		if err != nil {
			return err
		}
		for _, in := range resp.Instances.Instance {
			found := false
			for _, tag := range in.Tags.Tag {
				if (tag.TagKey == key && tag.TagValue == value) || (tag.Key == key && tag.Value == value) {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("instance %s lacks tag %s=%s", in.InstanceId, key, value)
			}
		}
		return nil
	}
}

// emulatorECS is a real ECS SDK client pointed at the emulator, for changes behind Terraform's back.
func emulatorECS(emu *acctest.Emulator) *ecs.Client {
	client, err := ecs.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		panic(err)
	}
	u, _ := url.Parse(emu.URL)
	client.Domain = u.Host
	client.GetConfig().Scheme = "HTTP"
	return client
}

func TestAccNodePool_disappearingNodesComeBack(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := emu.Config() + poolNetworkConfig("") + poolConfig(4, "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: config, Check: checkInstances(emu, 4)},
			{
				// Two nodes deleted behind Terraform's back: the plan shows it, the apply restores the size.
				PreConfig: func() { deleteSomeInstances(t, emu, 2) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(4)),
				},
				Check: checkInstances(emu, 4),
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

func deleteSomeInstances(t *testing.T, emu *acctest.Emulator, n int) {
	t.Helper()
	client := emulatorECS(emu)
	req := ecs.CreateDescribeInstancesRequest()
	req.MaxResults = "100"
	resp, err := client.DescribeInstances(req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range resp.Instances.Instance[:n] {
		ids = append(ids, in.InstanceId)
	}
	del := ecs.CreateDeleteInstancesRequest()
	del.InstanceId = &ids
	del.Force = "true"
	if _, err := client.DeleteInstances(del); err != nil {
		t.Fatal(err)
	}
}
