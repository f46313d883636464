package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
	emuess "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ess"
)

// pinnedPoolConfig is poolConfig pinned to gpu8Type (128 vCPUs a node), so the quotas below are
// exact.
func pinnedPoolConfig(size int, extra string) string {
	return poolNetworkConfig("") + fmt.Sprintf(`
resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "ai_training"
  instance_type = %q
  size          = %d
  %s
}
`, gpu8Type, size, extra)
}

// A pool that grows past the vCPU quota is refused at plan, on size, counting only its new
// nodes against what is left: 2 nodes run (256 vCPUs of 400), 2 more need 256 and 144 are left.
// Nothing is created: the apply never starts.
func TestAccNodePoolPreflight_growthOverQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetQuotas(emuecs.Quotas{PostpaidVCPUs: 400}); err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + pinnedPoolConfig(2, ""),
			Check:  checkInstances(emu, 2),
		}, {
			Config: emu.Config() + pinnedPoolConfig(4, ""),
			ExpectError: phrases("Preflight: the pool's new nodes do not fit", `size "2" needs 256 vCPUs (size 256)`,
				"max-postpaid-instance-vcpu-count is 400 with 256 in use: 144 available, 112 short",
				"raise max-postpaid-instance-vcpu-count to at least 512 in the Quota Center", "or lower size by 1"),
		}, {
			Config: emu.Config() + pinnedPoolConfig(2, ""),
			Check:  checkInstances(emu, 2),
		}},
	})
}

// A pool that does not grow is never refused because the account is full of its own nodes: at a
// quota its 2 nodes fill exactly, a change of tags plans and applies, and so does a shrink.
// The check reads the account only for a pool that grows, and then with a handful of calls
// whatever the size: one DescribeAccountAttributes per plan of the new pool, none after.
func TestAccNodePoolPreflight_noGrowthAtFullQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	quotaReads := func() int64 { return emu.Stats().Calls["DescribeAccountAttributes"] }
	var before int64
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + pinnedPoolConfig(2, ""),
			Check: resource.ComposeTestCheckFunc(checkInstances(emu, 2), func(*terraform.State) error {
				// Terraform plans the create twice (plan, then apply): one read each.
				if n := quotaReads(); n == 0 || n > 2 {
					return fmt.Errorf("the new pool's plans made %d DescribeAccountAttributes calls, want 1 or 2", n)
				}
				return nil
			}),
		}, {
			PreConfig: func() {
				if err := emu.SetQuotas(emuecs.Quotas{PostpaidVCPUs: 256}); err != nil {
					t.Fatal(err)
				}
				before = quotaReads()
			},
			Config: emu.Config() + pinnedPoolConfig(2, `tags = { team = "vision" }`),
			Check:  checkInstances(emu, 2),
		}, {
			Config: emu.Config() + pinnedPoolConfig(1, `tags = { team = "vision" }`),
			Check: resource.ComposeTestCheckFunc(checkInstances(emu, 1), func(*terraform.State) error {
				if n := quotaReads() - before; n != 0 {
					return fmt.Errorf("plans of a pool that does not grow made %d DescribeAccountAttributes calls, want none", n)
				}
				return nil
			}),
		}},
	})
}

// A new pool whose type is out of stock in its zones is refused at plan, on zone_ids, before any
// node is asked for: zone a has none left, zone b does not sell it; the fix names zone c.
func TestAccNodePoolPreflight_growthOutOfStock(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + poolNetworkConfig(""),
		}, {
			PreConfig: func() {
				emu.SetCapacity(map[string]map[string]int{"cn-wulanchabu-a": {gpu8Type: 0}})
				if err := emu.SetUnavailable(map[string]map[string]string{"cn-wulanchabu-b": {gpu8Type: "Zone.NotOnSale"}}); err != nil {
					t.Fatal(err)
				}
			},
			Config: emu.Config() + pinnedPoolConfig(2, ""),
			ExpectError: phrases("Preflight: the pool's new nodes do not fit",
				fmt.Sprintf(`zone_ids "cn-wulanchabu-a,cn-wulanchabu-b" has no zone with %s in stock`, gpu8Type), "2 of 2 nodes have no place",
				fmt.Sprintf("add zone cn-wulanchabu-c (it has %s in stock) to zone_ids", gpu8Type)),
		}, {
			// A step that expects an error runs no Check: what the refused plan left is counted
			// here, before this step plans anything.
			PreConfig: func() {
				if err := checkInstances(emu, 0)(nil); err != nil {
					t.Error(err)
				}
			},
			Config:   emu.Config() + poolNetworkConfig(""),
			PlanOnly: true,
		}},
	})
}

// A new autoscaling pool is held to the scaling group quota, with the region's groups counted
// against it; an existing one that grows its max_size takes no more of it.
func TestAccNodePoolPreflight_scalingGroupQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	train := autoscalingPoolConfig(`autoscaling = { min_size = 0, max_size = 4 }`)
	infer := strings.NewReplacer(`"train"`, `"infer"`, `name          = "train"`, `name          = "infer"`).Replace(train)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + poolNetworkConfig("") + train,
			Check:  checkScalingGroups(emu, 1),
		}, {
			PreConfig: func() {
				if err := emu.SetESSLimits(emuess.Limits{ScalingGroups: 1}); err != nil {
					t.Fatal(err)
				}
			},
			Config: emu.Config() + poolNetworkConfig("") + train + infer,
			ExpectError: phrases("Preflight: the pool's new nodes do not fit",
				`autoscaling.max_size "4" makes the pool autoscaling, and the stack's 1 scaling group(s) exceed the scaling group quota: 1 with 1 in use, 0 available`,
				"raise the scaling group quota (Auto Scaling, MaxNumberOfScalingGroups) to at least 2"),
		}, {
			Config: emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 0, max_size = 6 }`),
			Check:  checkScalingGroups(emu, 1),
		}},
	})
}

// A spot pool's plan asks DescribeAvailableResource with SpotStrategy once, for both checks that
// need its answer (the spot offer, checkSpotOffered, and the spot stock of the pool's own
// preflight), and once more for the pay-as-you-go stock: 2 calls for each plan, which
// DescribeAccountAttributes (once a plan, the preflight's quota read) counts.
func TestAccNodePoolPreflight_spotStockReadOnce(t *testing.T) {
	emu := acctest.StartEmulator(t)
	var stocks, plans int64
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + poolNetworkConfig(""),
		}, {
			PreConfig: func() {
				stocks, plans = emu.Stats().Calls["DescribeAvailableResource"], emu.Stats().Calls["DescribeAccountAttributes"]
			},
			Config:   emu.Config() + pinnedPoolConfig(2, `spot = { strategy = "SpotAsPriceGo" }`),
			PlanOnly: true, ExpectNonEmptyPlan: true,
		}},
	})
	stocks, plans = emu.Stats().Calls["DescribeAvailableResource"]-stocks, emu.Stats().Calls["DescribeAccountAttributes"]-plans
	if plans == 0 || stocks != 2*plans {
		t.Errorf("%d plans of a new spot pool made %d DescribeAvailableResource calls, want 2 each", plans, stocks)
	}
}

// A pool with instance_type_fallback is held to the stock of its planned type and of the
// candidates it falls back to: with every type sold out in its zones the plan is refused on
// zone_ids, naming the fallbacks; with only the planned type out it plans, as the create would
// launch a fallback.
func TestAccNodePoolPreflight_fallbackStock(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cands, _, err := catalog.Select(catalog.SelectRequest{Scenario: "ai_training", GPUModel: "A100", GPUsPerNode: 8, Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	planned := "" // the first candidate the network (no HPC cluster) can take, as the pool plans it
	for _, c := range cands {
		if !c.InstanceType.RequiresHPCCluster {
			planned = c.InstanceType.Name
			break
		}
	}
	unavailable := func(types ...string) func() {
		return func() {
			t.Helper()
			per := map[string]string{}
			for _, typ := range types {
				per[typ] = "Zone.NotOnSale"
			}
			if err := emu.SetUnavailable(map[string]map[string]string{"cn-wulanchabu-a": per, "cn-wulanchabu-b": per}); err != nil {
				t.Fatal(err)
			}
		}
	}
	pool := poolNetworkConfig("") + poolConfig(2, "instance_type_fallback = true")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + poolNetworkConfig(""),
		}, {
			PreConfig: unavailable("*"),
			Config:    emu.Config() + pool,
			ExpectError: phrases("Preflight: the pool's new nodes do not fit",
				fmt.Sprintf(`zone_ids "cn-wulanchabu-a,cn-wulanchabu-b" has no zone with %s or its fallbacks`, planned),
				"2 of 2 nodes have no place"),
		}, {
			PreConfig:          unavailable(planned),
			Config:             emu.Config() + pool,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}
