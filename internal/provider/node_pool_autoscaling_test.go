package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

func autoscalingPoolConfig(extra string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  %s
}
`, extra)
}

// emulatorESS is a real ESS SDK client pointed at the emulator: the calls the Kubernetes Cluster
// Autoscaler's alicloud provider makes, made from the test.
func emulatorESS(emu *acctest.Emulator) *ess.Client {
	client, err := ess.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		panic(err)
	}
	toEmulator(emu, &client.Client)
	return client
}

// autoscalerSetSize does what the autoscaler's setCapcityInstanceSize does: find or create the
// acs-autogen-increase-rules rule, set it to TotalCapacity n, execute it by its ARI and delete
// it; then it waits for the activity to end.
func autoscalerSetSize(t *testing.T, emu *acctest.Emulator, group string, n int) {
	t.Helper()
	c := emulatorESS(emu)
	d := ess.CreateDescribeScalingRulesRequest()
	d.RegionId, d.ScalingGroupId, d.ScalingRuleName = acctest.Region, group, &[]string{"acs-autogen-increase-rules"}
	dr, err := c.DescribeScalingRules(d)
	if err != nil {
		t.Fatal(err)
	}
	var id, ari string
	if len(dr.ScalingRules.ScalingRule) == 0 {
		cr := ess.CreateCreateScalingRuleRequest()
		cr.RegionId, cr.ScalingGroupId, cr.AdjustmentType, cr.AdjustmentValue = acctest.Region, group, "TotalCapacity", requests.NewInteger(n)
		cr.ScalingRuleName = "acs-autogen-increase-rules"
		resp, err := c.CreateScalingRule(cr)
		if err != nil {
			t.Fatal(err)
		}
		id, ari = resp.ScalingRuleId, resp.ScalingRuleAri
	} else {
		id, ari = dr.ScalingRules.ScalingRule[0].ScalingRuleId, dr.ScalingRules.ScalingRule[0].ScalingRuleAri
	}
	m := ess.CreateModifyScalingRuleRequest()
	m.RegionId, m.ScalingRuleId, m.AdjustmentType, m.AdjustmentValue = acctest.Region, id, "TotalCapacity", requests.NewInteger(n)
	if _, err := c.ModifyScalingRule(m); err != nil {
		t.Fatal(err)
	}
	x := ess.CreateExecuteScalingRuleRequest()
	x.RegionId, x.ScalingRuleAri = acctest.Region, ari
	xr, err := c.ExecuteScalingRule(x)
	if err != nil {
		t.Fatal(err)
	}
	del := ess.CreateDeleteScalingRuleRequest()
	del.RegionId, del.ScalingRuleId = acctest.Region, id
	if _, err := c.DeleteScalingRule(del); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		a := ess.CreateDescribeScalingActivitiesRequest()
		a.RegionId, a.ScalingGroupId, a.ScalingActivityId = acctest.Region, group, &[]string{xr.ScalingActivityId}
		ar, err := c.DescribeScalingActivities(a)
		if err != nil {
			t.Fatal(err)
		}
		if st := ar.ScalingActivities.ScalingActivity[0].StatusCode; st != "InProgress" {
			if st != "Successful" {
				t.Fatalf("scaling activity ended %s", st)
			}
			return
		}
	}
	t.Fatal("the scaling activity did not end in 30 s")
}

// autoscalerRemove removes named instances one call each, as the autoscaler's DeleteInstances does.
func autoscalerRemove(t *testing.T, emu *acctest.Emulator, group string, n int) {
	t.Helper()
	c := emulatorESS(emu)
	d := ess.CreateDescribeScalingInstancesRequest()
	d.RegionId, d.ScalingGroupId, d.PageSize = acctest.Region, group, requests.NewInteger(100)
	resp, err := c.DescribeScalingInstances(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range resp.ScalingInstances.ScalingInstance[:n] {
		r := ess.CreateRemoveInstancesRequest()
		r.RegionId, r.ScalingGroupId, r.InstanceId = acctest.Region, group, &[]string{in.InstanceId}
		if _, err := c.RemoveInstances(r); err != nil {
			t.Fatal(err)
		}
	}
}

// stateGroupID reads the pool's scaling_group_id out of the last state, for PreConfig steps.
type stateGroupID struct{ id string }

func (g *stateGroupID) capture(s *terraform.State) error {
	rs := s.RootModule().Resources["gpucluster_node_pool.train"]
	if rs == nil || rs.Primary.Attributes["scaling_group_id"] == "" {
		return fmt.Errorf("no scaling_group_id in state")
	}
	g.id = rs.Primary.Attributes["scaling_group_id"]
	return nil
}

// checkTemplateLabels reads the group's active scaling configuration as the Cluster Autoscaler
// does to build the template node of a group without nodes (DescribeScalingGroups, then
// DescribeScalingConfigurations; the configuration's tags become the template's labels) and
// checks that each of the keys is there with the value of the pool's node_labels.
func checkTemplateLabels(emu *acctest.Emulator, keys ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources["gpucluster_node_pool.train"]
		if rs == nil {
			return fmt.Errorf("no gpucluster_node_pool.train in state")
		}
		c := emulatorESS(emu)
		g := ess.CreateDescribeScalingGroupsRequest()
		id := rs.Primary.Attributes["scaling_group_id"]
		g.RegionId, g.ScalingGroupId = acctest.Region, &[]string{id}
		gr, err := c.DescribeScalingGroups(g)
		if err != nil || len(gr.ScalingGroups.ScalingGroup) != 1 {
			return fmt.Errorf("DescribeScalingGroups(%s): %v", id, err)
		}
		cf := ess.CreateDescribeScalingConfigurationsRequest()
		cf.RegionId, cf.ScalingGroupId = acctest.Region, id
		cf.ScalingConfigurationId = &[]string{gr.ScalingGroups.ScalingGroup[0].ActiveScalingConfigurationId}
		cr, err := c.DescribeScalingConfigurations(cf)
		if err != nil || len(cr.ScalingConfigurations.ScalingConfiguration) != 1 {
			return fmt.Errorf("DescribeScalingConfigurations of the active configuration: %v", err)
		}
		template := map[string]string{}
		for _, tag := range cr.ScalingConfigurations.ScalingConfiguration[0].Tags.Tag {
			template[tag.Key] = tag.Value
		}
		for _, k := range keys {
			want := rs.Primary.Attributes["node_labels."+k]
			if want == "" {
				return fmt.Errorf("node_labels has no %s", k)
			}
			if template[k] != want {
				return fmt.Errorf("the template node of a group at zero would have label %s=%q, want the pool's %q (configuration tags %v)", k, template[k], want, template)
			}
		}
		return nil
	}
}

func checkScalingGroups(emu *acctest.Emulator, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := len(emu.Resources().ScalingGroups); got != want {
			return fmt.Errorf("the emulator holds %d scaling groups, want %d", got, want)
		}
		return nil
	}
}

// Must show: an autoscaling pool (min 0, max 50) driven by the autoscaler's own ESS calls (scale
// out to 20, remove 5 named instances); the next plan is empty; destroy leaves nothing.
func TestAccNodePoolAutoscaling_autoscalerOwnsTheSize(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 0, max_size = 50 }`)
	var group stateGroupID
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("scaling_group_id"), knownvalue.StringRegexp(regexp.MustCompile(`^asg-`))),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("size"), knownvalue.Null()),
				},
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 0), checkScalingGroups(emu, 1), group.capture,
					checkTemplateLabels(emu, "gpucluster.io/pool", "gpucluster.io/node-role", "gpucluster.io/scenario", "nvidia.com/gpu.present", "nvidia.com/gpu.product")),
			},
			{
				PreConfig: func() {
					autoscalerSetSize(t, emu, group.id, 20)
					autoscalerRemove(t, emu, group.id, 5)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(15)),
				},
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 15), checkEveryInstanceTagged(emu, "gpucluster:pool-name", "train")),
			},
			{
				// Import finds the group by the pool id and takes its bounds from it.
				ResourceName:      "gpucluster_node_pool.train",
				ImportState:       true,
				ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"gpu_model", "gpus_per_node", "findings", "node_labels", "node_taints",
					"estimated_hourly_price", "zone_ids", "timeouts", "instance_type_fallback"},
			},
			{
				// Terraform owns the bounds: raising max_size is an in-place update that keeps the nodes;
				// a new tag goes on them in place too.
				Config: emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 0, max_size = 60 }
  tags = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 15), checkScalingGroups(emu, 1), checkEveryInstanceTagged(emu, "team", "vision")),
			},
			{
				// Bounds changed outside Terraform show in the plan and are put back.
				PreConfig: func() {
					m := ess.CreateModifyScalingGroupRequest()
					m.RegionId, m.ScalingGroupId, m.MaxSize = acctest.Region, group.id, requests.NewInteger(40)
					if _, err := emulatorESS(emu).ModifyScalingGroup(m); err != nil {
						t.Fatal(err)
					}
				},
				Config: emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 0, max_size = 60 }
  tags = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					for _, g := range emu.Resources().ScalingGroups {
						if g["max_size"] != 60 {
							return fmt.Errorf("scaling group max_size %v after the apply, want 60", g["max_size"])
						}
					}
					return nil
				},
			},
			{
				// New launch settings roll the autoscaler's 15 nodes, 5 at a time, and keep their count.
				Config: emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`
  autoscaling     = { min_size = 0, max_size = 60 }
  update_strategy = { max_unavailable = 5 }
  image_id        = "aliyun_3_x64_20G_alibase_20240101.vhd"
  tags            = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(15)),
				},
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 15), checkImages(emu, "aliyun_3_x64_20G_alibase_20240101.vhd", 15),
					checkEveryInstanceTagged(emu, "team", "vision")),
			},
		},
	})
}

// Must show: stock-out in the first zone; the group lands in the next.
func TestAccNodePoolAutoscaling_stockOutFirstZone(t *testing.T) {
	emu := acctest.StartEmulator(t)
	emu.SetUnavailable(map[string]map[string]string{acctest.Region + "-a": {"*": "OperationDenied.NoStock"}}) //nolint:errcheck // a valid code
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config: emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 3, max_size = 10 }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(3)),
				statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes").AtSliceIndex(0).AtMapKey("zone_id"), knownvalue.StringExact(acctest.Region+"-b")),
			},
			Check: resource.ComposeTestCheckFunc(checkInstances(emu, 3), checkZones(emu, acctest.Region+"-b")),
		}},
	})
}

// Must show: a spot pool with fallback: with spot stock at zero, pay-as-you-go nodes are launched.
func TestAccNodePoolAutoscaling_spotFallsBackToOnDemand(t *testing.T) {
	emu := acctest.StartEmulator(t)
	typ := plannedType(t)
	emu.SetSpotCapacity(map[string]map[string]int{acctest.Region + "-a": {typ: 0}, acctest.Region + "-b": {typ: 0}})
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config: emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`
  instance_type_fallback = false
  spot        = { strategy = "SpotAsPriceGo" }
  autoscaling = { min_size = 3, max_size = 10 }`),
			Check: resource.ComposeTestCheckFunc(checkInstances(emu, 3),
				resource.TestCheckResourceAttrWith("gpucluster_node_pool.train", "estimated_hourly_price", positiveNumber),
				func(*terraform.State) error {
					for _, in := range emu.Resources().Instances {
						if in["spot_strategy"] != "NoSpot" {
							return fmt.Errorf("instance %s is %v; with no spot stock every node should be pay-as-you-go", in["id"], in["spot_strategy"])
						}
					}
					return nil
				}),
		}},
	})
}

// The check that refuses spot of a type sold without spot (the bad-input matrix's row) lets the
// same pool plan when its type has spot: here another type is the spot-less one.
func TestAccNodePoolAutoscaling_spotOfferedPlans(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetNoSpot([]string{"ecs.gn7i-c16g1.4xlarge"}); err != nil {
		t.Fatal(err)
	}
	network := emu.Config() + poolNetworkConfig("")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: network},
			{
				Config: network + `
resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "molecular_dynamics"
  instance_type = "ecs.gn7i-c8g1.2xlarge"
  spot          = { strategy = "SpotAsPriceGo" }
  autoscaling   = { min_size = 0, max_size = 3 }
}
`,
				PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
	if n := emu.Stats().Calls["DescribeAvailableResource"]; n == 0 {
		t.Fatal("the plan never asked DescribeAvailableResource which types are sold as spot")
	}
}

// Bad input is refused at plan, naming the attribute, and nothing is created.
// manyTags is n tags in HCL map syntax.
func manyTags(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " t%d = \"v\",", i)
	}
	return b.String()
}

func TestAccNodePoolAutoscaling_badInput(t *testing.T) {
	emu := acctest.StartEmulator(t)
	for _, c := range []struct{ name, extra, want string }{
		{"min above max", `autoscaling = { min_size = 5, max_size = 3 }`, `autoscaling\.min_size = 5 is more than max_size = 3`},
		{"max over the group quota", `autoscaling = { min_size = 0, max_size = 2001 }`, `max_size`},
		{"size and autoscaling", "size = 2\n  autoscaling = { min_size = 0, max_size = 3 }", `size`},
		{"spot mix without spot", `autoscaling = { min_size = 0, max_size = 3, on_demand_base = 1 }`, `autoscaling\.on_demand_base needs spot`},
		{"budget exceeded", `autoscaling = { min_size = 0, max_size = 50, max_hourly_price = 10 }`, `(?s)Pool over budget at max_size.*max_size = 50 nodes`},
		// 6 tags of the provider's, 5 built-in labels on an A100 pool's configuration, 10 of the user's.
		{"too many tags with the template labels", "autoscaling = { min_size = 0, max_size = 3 }\n  tags = {" + manyTags(10) + "}",
			`(?s)Too many tags for a node.*21 tags: 11 of the provider's own \(5 of them the pool's built-in node labels.*drop 1 of tags`},
		{"a built-in label as a tag", "autoscaling = { min_size = 0, max_size = 3 }\n  tags = { \"gpucluster.io/pool\" = \"x\" }",
			`(?s)Reserved tag key.*"gpucluster.io/pool" is a node label the provider sets itself`},
	} {
		t.Run(c.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
				CheckDestroy:             checkNothingLeft(emu),
				Steps: []resource.TestStep{{
					Config:      emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(c.extra),
					ExpectError: wrapped(c.want),
				}},
			})
			if n := len(emu.Resources().ScalingGroups); n != 0 {
				t.Fatalf("%d scaling groups created by a refused plan", n)
			}
		})
	}
}

// Must show: OpenTofu killed (SIGKILL, with its provider) once the scaling group exists, while the
// create waits for its nodes; the next apply adopts the group (no second one) and its pool id,
// the plan after it is empty, and destroy leaves nothing.
func TestAccNodePoolAutoscaling_crashMidCreate(t *testing.T) {
	run := acctest.NewCLIRun(t)
	// Three seconds of boot keep the create waiting for its minimum long enough to kill.
	emu := acctest.StartEmulator(t, acctest.WithBootTime(3*time.Second))
	network := crashProviders + emu.Config() + poolNetworkConfig("")
	run.Write(network)
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	run.Write(network + autoscalingPoolConfig(`autoscaling = { min_size = 10, max_size = 50 }`))
	applyKilledWhen(run, func() bool { return poolInstances(emu, "train") > 0 }, "the group launched a node")
	groups := emu.Resources().ScalingGroups
	if len(groups) != 1 {
		t.Fatalf("%d scaling groups after the kill, want 1", len(groups))
	}
	first := groups[0]["id"].(string)

	applied := run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	if groups = emu.Resources().ScalingGroups; len(groups) != 1 || groups[0]["id"] != first {
		t.Fatalf("after the second apply the emulator holds scaling groups %v, want only %s\n%s", groups, first, applied)
	}
	if got := poolInstances(emu, "train"); got != 10 {
		t.Fatalf("the pool has %d nodes, want its minimum 10", got)
	}
	if code, plan := run.Run("plan", "-detailed-exitcode", "-no-color", "-input=false"); code != 0 {
		t.Fatalf("plan after the second apply is not empty (exit %d):\n%s", code, plan)
	}
	state := run.MustRun("state", "show", "-no-color", "gpucluster_node_pool.train")
	if !strings.Contains(state, first) {
		t.Fatalf("the state does not name the adopted group %s:\n%s", first, state)
	}
	run.MustRun("destroy", "-auto-approve", "-no-color", "-input=false")
	if err := checkNothingLeft(emu)(nil); err != nil {
		t.Fatal(err)
	}
}

// The autoscaling pool applies, plans clean and destroys through 20% throttling, 5%
// ServiceUnavailable and 2% dropped connections, with one scaling group and nothing leaked.
func TestAccNodePoolAutoscaling_faults(t *testing.T) {
	emu := acctest.StartEmulator(t, acctest.WithBootTime(500*time.Millisecond))
	emu.SetFaults(emulator.Faults{ThrottleRate: 0.20, UnavailableRate: 0.05, ResetRate: 0.02})
	config := emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 20, max_size = 50 }`)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy: func(s *terraform.State) error {
			st := emu.Stats()
			t.Logf("calls %d, injected: %v", st.Total, st.Errors)
			if st.Errors["Throttling.User"] == 0 {
				return fmt.Errorf("no throttling was injected (%v): the test proves nothing", st.Errors)
			}
			return checkNothingLeft(emu)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  resource.ComposeTestCheckFunc(checkInstances(emu, 20), checkScalingGroups(emu, 1)),
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
