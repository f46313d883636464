package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
	emuess "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ess"
)

// gpu8Type has 128 vCPUs and 8 GPUs in the catalog.
const gpu8Type = "ecs.gn7e-c16g1.32xlarge"

// preflightConfig is a stack of one pool of gpu8Type with extra pool attributes.
func preflightConfig(size int, pool string) string {
	return fmt.Sprintf(`
data "gpucluster_preflight" "stack" {
  pools = [{
    instance_type = %q
    size          = %d
    %s
  }]
  load_balancers         = 1
  load_balancer_backends = 3
}
`, gpu8Type, size, pool)
}

// phrases matches the phrases in order, whatever the CLI's line wrapping put between their words.
func phrases(ps ...string) *regexp.Regexp {
	quoted := make([]string, len(ps))
	for i, p := range ps {
		words := strings.Fields(p)
		for j, w := range words {
			words[j] = regexp.QuoteMeta(w)
		}
		quoted[i] = strings.Join(words, `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, `.*`))
}

// A stack that fits gets fits, a summary of what it takes and the estimate, and the read stays a
// handful of calls: as many at 1,000 nodes as at 10.
func TestAccPreflight_fits(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetQuotas(emuecs.Quotas{PostpaidVCPUs: 200_000}); err != nil {
		t.Fatal(err)
	}
	ds := "data.gpucluster_preflight.stack"
	var callsAt10 int64
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + preflightConfig(10, ""),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("fits"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("summary"), knownvalue.StringRegexp(phrases(
					"fits: 1280 of 200000 vCPUs left under max-postpaid-instance-vcpu-count",
					"the GPU quota not checked (no account-wide GPU quota: the pay-as-you-go pools are held to the Quota Center's ecs-spec quota", "10 nodes placed",
					"1 of 30 load balancers left under the CLB instance quota (slb_quota_instances_num)", "about 8 API calls, 0s at 20 requests/s"))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("api_calls"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("calls").AtMapKey("RunInstances"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("estimated_create_seconds"), knownvalue.Int64Exact(0)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("shortfalls"), knownvalue.ListSizeExact(0)),
			},
		}, {
			PreConfig: func() { callsAt10 = emu.Stats().Total },
			Config:    emu.Config() + preflightConfig(1000, ""),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("summary"), knownvalue.StringRegexp(phrases(
					"fits: 128000 of 200000 vCPUs", "1000 nodes placed", "about 35 API calls, 2s"))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("estimated_create_seconds"), knownvalue.Int64Exact(2)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("calls").AtMapKey("RunInstances"), knownvalue.Int64Exact(10)),
			},
		}},
	})
	stats := emu.Stats()
	t.Logf("calls: %v (%d in the 10-node step)", stats.Calls, callsAt10)
	if got := stats.Total - callsAt10; got > callsAt10 {
		t.Fatalf("the 1,000-node step made %d calls, the 10-node one %d: the preflight is not batched", got, callsAt10)
	}
	// load_balancers = 1 and a pay-as-you-go GPU pool: two ListProductQuotas (slb, ecs-spec) per
	// read too.
	if a, r, q := stats.Calls["DescribeAccountAttributes"], stats.Calls["DescribeAvailableResource"], stats.Calls["ListProductQuotas"]; a == 0 || a != r || 2*a != q || stats.Total != a+r+q {
		t.Fatalf("want one DescribeAccountAttributes, one DescribeAvailableResource and two ListProductQuotas per read and nothing else, got %v", stats.Calls)
	}
}

// Each shortfall stops the plan with an error naming the attribute, the need, what is available
// and the fix.
func TestAccPreflight_payAsYouGoQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetQuotas(emuecs.Quotas{PostpaidVCPUs: 300}); err != nil {
		t.Fatal(err)
	}
	expectPreflightError(t, emu, preflightConfig(4, ""), phrases(
		"Preflight: the stack does not fit", `pools[0].size "4" needs 512 vCPUs`,
		"max-postpaid-instance-vcpu-count is 300 with 0 in use: 300 available, 212 short",
		"raise max-postpaid-instance-vcpu-count to at least 512 in the Quota Center", "or lower pools[0].size by 2"))
}

// With enforce = false the shortfall is a warning and data: fits false and the shortfall led by
// the pool's name, for a module's postcondition to report.
func TestAccPreflight_notEnforced(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetQuotas(emuecs.Quotas{PostpaidVCPUs: 300}); err != nil {
		t.Fatal(err)
	}
	ds := "data.gpucluster_preflight.stack"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + strings.Replace(preflightConfig(4, `name = "train"`), "load_balancers ", "enforce = false\n  load_balancers ", 1),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("fits"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("summary"), knownvalue.StringRegexp(phrases("1 shortfall(s)"))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("shortfalls"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringRegexp(phrases(`pool "train": pools[0].size "4" needs 512 vCPUs`, "lower pools[0].size by 2")),
				})),
			},
		}},
	})
}

func TestAccPreflight_spotQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetQuotas(emuecs.Quotas{SpotVCPUs: 128}); err != nil {
		t.Fatal(err)
	}
	expectPreflightError(t, emu, preflightConfig(2, "spot = true\n    max_size = 3"), phrases(
		`pools[0].size "2" needs 384 vCPUs (pools[0].size 256, pools[0].max_size 128)`,
		"max-spot-instance-vcpu-count is 128 with 0 in use: 128 available, 256 short",
		"raise max-spot-instance-vcpu-count to at least 384 in the Quota Center", "or lower pools[0].size by 2"))
}

// No stock of the type in the pool's zones: zone a has none left (/_emulator/capacity), zone b
// does not sell it (/_emulator/unavailable); zone c has it, and the fix says so.
func TestAccPreflight_stock(t *testing.T) {
	emu := acctest.StartEmulator(t)
	zone := func(s string) string { return acctest.Region + "-" + s }
	emu.SetCapacity(map[string]map[string]int{zone("a"): {gpu8Type: 0}})
	if err := emu.SetUnavailable(map[string]map[string]string{zone("b"): {gpu8Type: "Zone.NotOnSale"}}); err != nil {
		t.Fatal(err)
	}
	expectPreflightError(t, emu, preflightConfig(4, fmt.Sprintf("zone_ids = [%q, %q]", zone("a"), zone("b"))), phrases(
		fmt.Sprintf(`pools[0].zone_ids "%s,%s" has no zone with %s in stock`, zone("a"), zone("b"), gpu8Type),
		"4 of 4 nodes have no place", fmt.Sprintf("add zone %s (it has %s in stock) to zone_ids", zone("c"), gpu8Type)))
}

// preflightNetwork is a gpucluster_rdma_network "net" in zone a with one vSwitch of vswitchCIDR
// in the VPC cidr (with the default egress: one NAT gateway).
func preflightNetwork(name, cidr, vswitchCIDR string) string {
	return fmt.Sprintf(`
resource "gpucluster_rdma_network" "net" {
  name          = %q
  cidr_block    = %q
  zone_ids      = [%q]
  vswitch_cidrs = { %q = %q }
}
`, name, cidr, acctest.Region+"-a", acctest.Region+"-a", vswitchCIDR)
}

// A vSwitch too small for the pool: a /28 hands out 10 addresses, the pool needs 12.
func TestAccPreflight_vswitchAddresses(t *testing.T) {
	emu := acctest.StartEmulator(t)
	network := preflightNetwork("preflight", "10.40.0.0/16", "10.40.0.0/28")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + network,
		}, {
			Config: emu.Config() + network + preflightConfig(12, "network_id = gpucluster_rdma_network.net.id"),
			ExpectError: phrases(`pools[0].vswitch_ids "vsw-`, "needs 2 more private addresses: vSwitch vsw-",
				"(10.40.0.0/28) has 10 free, 0 left once nodes take them", "widen CIDR 10.40.0.0/28: replace vSwitch vsw-",
				"with a /27 (32 addresses)"),
		}},
	})
}

func expectPreflightError(t *testing.T, emu *acctest.Emulator, config string, want *regexp.Regexp) {
	t.Helper()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config:      emu.Config() + config,
			PlanOnly:    true,
			ExpectError: want,
		}},
	})
}

// Bad input is a plan-time error on the pool's attribute: a type the catalog does not know (its
// vCPUs are unknown), a max_size under size, a fallback type the catalog does not know (on its
// element).
func TestAccPreflight_badInput(t *testing.T) {
	emu := acctest.StartEmulator(t)
	expectPreflightError(t, emu, strings.Replace(preflightConfig(2, ""), gpu8Type, "ecs.gn7e-c16g1.64xlarge", 1), phrases(
		"Preflight: invalid pool", `pools[0].instance_type "ecs.gn7e-c16g1.64xlarge" is not a size of family gn7e`, "use one of ecs.gn7e-"))
	expectPreflightError(t, emu, preflightConfig(4, "max_size = 2"), phrases(
		`pools[0].max_size "2" is below size (4)`, "set max_size to at least size"))
	expectPreflightError(t, emu, preflightConfig(2, `fallback_instance_types = ["ecs.gn7e-c16g1.16xlarge", "ecs.gn7e-c16g1.64xlarge"]`), phrases(
		"Preflight: invalid pool", `pools[0].fallback_instance_types[1] "ecs.gn7e-c16g1.64xlarge" is not a size of family gn7e`, "use one of ecs.gn7e-"))
}

// A spot pool is placed by the spot stock (DescribeAvailableResource with SpotStrategy): a type
// the region sells pay-as-you-go only has no place, though its pay-as-you-go stock is there.
func TestAccPreflight_spotStock(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetNoSpot([]string{gpu8Type}); err != nil {
		t.Fatal(err)
	}
	expectPreflightError(t, emu, preflightConfig(2, "spot = true"), phrases(
		fmt.Sprintf(`pools[0].zone_ids "%s-a,%s-b,%s-c" has no zone with %s as spot in stock`, acctest.Region, acctest.Region, acctest.Region, gpu8Type),
		"2 of 2 nodes have no place", fmt.Sprintf("choose another instance_type: no zone of the region has %s as spot in stock, or drop spot", gpu8Type)))
}

// Autoscaling pools are held to the Auto Scaling quota DescribeLimitation answers: the count of
// scaling groups (the ones the region holds counted against it) and the largest max_size.
func TestAccPreflight_scalingGroupQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetESSLimits(emuess.Limits{ScalingGroups: 1, MaxSize: 100}); err != nil {
		t.Fatal(err)
	}
	two := fmt.Sprintf(`
data "gpucluster_preflight" "stack" {
  pools = [
    { instance_type = %[1]q, size = 1, max_size = 10 },
    { instance_type = %[1]q, size = 1, max_size = 20 },
  ]
}
`, gpu8Type)
	expectPreflightError(t, emu, two, phrases(
		`pools[1].max_size "20" makes the pool autoscaling, and the stack's 2 scaling group(s) exceed the scaling group quota: 1 with 0 in use, 1 available`,
		"raise the scaling group quota (Auto Scaling, MaxNumberOfScalingGroups) to at least 2 in the Quota Center",
		"or make 1 pool(s) fixed-size"))
	expectPreflightError(t, emu, preflightConfig(1, "max_size = 150"), phrases(
		`pools[0].max_size "150" is above the largest max size a scaling group may have here, 100`, "lower it to 100 or split the pool"))
}

// A pool with fallback_instance_types fits where its type is out but a fallback is in stock,
// and the summary says which fallback takes how many nodes where; where neither is, the
// shortfall names both. Zone a has no gpu8Type left but has the 4-GPU size, zone b does not
// sell gpu8Type; then neither zone has either.
func TestAccPreflight_fallbackStock(t *testing.T) {
	const fallback = "ecs.gn7e-c16g1.16xlarge"
	emu := acctest.StartEmulator(t)
	zone := func(s string) string { return acctest.Region + "-" + s }
	emu.SetCapacity(map[string]map[string]int{zone("a"): {gpu8Type: 0}})
	if err := emu.SetUnavailable(map[string]map[string]string{zone("b"): {gpu8Type: "Zone.NotOnSale"}}); err != nil {
		t.Fatal(err)
	}
	pool := fmt.Sprintf("zone_ids = [%q, %q]\n    fallback_instance_types = [%q]", zone("a"), zone("b"), fallback)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + preflightConfig(4, pool),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_preflight.stack", tfjsonpath.New("fits"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.gpucluster_preflight.stack", tfjsonpath.New("summary"), knownvalue.StringRegexp(phrases(
					fmt.Sprintf("pools[0].size: %s out of stock or quota, nodes on fallback %s (4 in %s)", gpu8Type, fallback, zone("a"))))),
			},
		}, {
			PreConfig: func() {
				emu.SetCapacity(map[string]map[string]int{zone("a"): {gpu8Type: 0, fallback: 0}})
				if err := emu.SetUnavailable(map[string]map[string]string{zone("b"): {gpu8Type: "Zone.NotOnSale", fallback: "Zone.NotOnSale"}}); err != nil {
					t.Fatal(err)
				}
			},
			Config: emu.Config() + preflightConfig(4, pool),
			ExpectError: phrases(fmt.Sprintf(`pools[0].zone_ids "%s,%s" has no zone with %s or its fallbacks %s in stock`, zone("a"), zone("b"), gpu8Type, fallback),
				"4 of 4 nodes have no place", fmt.Sprintf("add zone %s (it has %s or its fallbacks %s in stock) to zone_ids", zone("c"), gpu8Type, fallback)),
		}},
	})
}
