package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// The stack's EIPs and load balancers are held to the Quota Center's eip_quota_instances_num and
// slb_quota_instances_num, read at plan through ListProductQuotas: beyond one the plan stops on
// its attribute, naming the quota code and the fix.
func TestAccPreflight_centerQuotas(t *testing.T) {
	for _, tc := range []struct {
		name     string
		quota    string
		limit    int
		old, new string // the change to preflightConfig that asks for more than the limit
		want     *regexp.Regexp
	}{
		{"eips", "eip_quota_instances_num", 2, "load_balancers ", "eips = 3\n  load_balancers ", phrases(
			"Preflight: the stack does not fit", `eips "3" needs 3 EIPs`,
			"the EIP quota (eip_quota_instances_num) is 2 with 0 in use: 2 available, 1 short",
			"raise the EIP quota (eip_quota_instances_num) to at least 3 in the Quota Center", "or lower eips by 1")},
		{"load balancers", "slb_quota_instances_num", 1, "load_balancers         = 1", "load_balancers = 2", phrases(
			"Preflight: the stack does not fit", `load_balancers "2" needs 2 load balancers`,
			"the CLB instance quota (slb_quota_instances_num) is 1 with 0 in use: 1 available, 1 short",
			"raise the CLB instance quota (slb_quota_instances_num) to at least 2 in the Quota Center")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emu := acctest.StartEmulator(t)
			if err := emu.SetQuotaCenter(map[string]int{tc.quota: tc.limit}); err != nil {
				t.Fatal(err)
			}
			base := preflightConfig(1, "")
			if !strings.Contains(base, tc.old) {
				t.Fatalf("preflightConfig no longer holds %q", tc.old)
			}
			expectPreflightError(t, emu, strings.Replace(base, tc.old, tc.new, 1), tc.want)
		})
	}
}

// The NAT gateway quota counts per VPC (natgw_quota_nat_num_per_vpc): the stack's nat_gateways
// are held to it in the VPC of its pools, with the gateways already there (the network's own
// egress NAT gateway) as the usage. At a quota of 1 the plan stops; at 2 the summary says so.
// Another VPC of the region holds two gateways, so a check that took the region's fullest VPC
// (what the Quota Center's usage may be) for the stack's would stop the plan at 2 too.
func TestAccPreflight_natGatewaysPerVPC(t *testing.T) {
	emu := acctest.StartEmulator(t)
	natGatewaysInOtherVPC(t, emu, 2)
	network := preflightNetwork("preflight-nat", "10.41.0.0/16", "10.41.0.0/24")
	stack := strings.Replace(preflightConfig(1, "network_id = gpucluster_rdma_network.net.id"), "load_balancers ", "nat_gateways = 1\n  load_balancers ", 1)
	setNAT := func(n int) func() {
		return func() {
			if err := emu.SetQuotaCenter(map[string]int{"natgw_quota_nat_num_per_vpc": n}); err != nil {
				t.Fatal(err)
			}
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + network,
		}, {
			PreConfig: setNAT(1),
			Config:    emu.Config() + network + stack,
			ExpectError: phrases("Preflight: the stack does not fit", `nat_gateways "1" needs 1 NAT gateways`,
				"the NAT gateway quota per VPC (natgw_quota_nat_num_per_vpc) in vpc-", "is 1 with 1 in use: 0 available, 1 short",
				"raise the NAT gateway quota per VPC (natgw_quota_nat_num_per_vpc) in vpc-", "to at least 2 in the Quota Center"),
		}, {
			PreConfig: setNAT(2),
			Config:    emu.Config() + network + stack,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_preflight.stack", tfjsonpath.New("summary"), knownvalue.StringRegexp(phrases(
					"1 of 1 NAT gateways left under the NAT gateway quota per VPC (natgw_quota_nat_num_per_vpc) in vpc-"))),
			},
		}},
	})
}

// natGatewaysInOtherVPC makes n NAT gateways in a VPC of their own, as the account's owner would.
func natGatewaysInOtherVPC(t *testing.T, emu *acctest.Emulator, n int) {
	t.Helper()
	ctx, c := context.Background(), bundleClient(t, emu)
	vpcID, err := c.CreateVPC(ctx, cloud.VPCInput{Name: "other", CIDRBlock: "172.16.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitVPCAvailable(ctx, vpcID); err != nil {
		t.Fatal(err)
	}
	vsw, err := c.CreateVSwitch(ctx, cloud.VSwitchInput{VPCID: vpcID, ZoneID: acctest.Region + "-a", CIDRBlock: "172.16.0.0/24", Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitVSwitchAvailable(ctx, vsw); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, _, err := c.CreateNATGateway(ctx, cloud.NATGatewayInput{VPCID: vpcID, VSwitchID: vsw, Name: fmt.Sprintf("other-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// A pay-as-you-go GPU pool is held to the Quota Center's ecs-spec quota of its type, zone by
// zone: 16 GPUs of gpu8Type in zone a hold 2 of its 4 nodes, and the plan stops on size naming
// the quota and the fix; with zone b (no quota read there) beside it, the rest go there.
func TestAccPreflight_specGPUQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	zone := func(s string) string { return acctest.Region + "-" + s }
	if err := emu.SetQuotaCenter(map[string]int{gpu8Type + "@" + zone("a"): 16}); err != nil {
		t.Fatal(err)
	}
	expectPreflightError(t, emu, preflightConfig(4, fmt.Sprintf("zone_ids = [%q]", zone("a"))), phrases(
		"Preflight: the stack does not fit", `pools[0].size "4" needs 16 more GPUs of `+gpu8Type+` pay-as-you-go`,
		"the Quota Center's ecs-spec quotas of its zones leave ("+zone("a")+": 16 with 0 in use); 2 of 4 nodes have no place",
		"raise the ecs-spec quota of "+gpu8Type+" (pay-as-you-go) in zone "+zone("a")+" to at least 32 in the Quota Center",
		"or lower pools[0].size by 2"))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + preflightConfig(4, fmt.Sprintf("zone_ids = [%q, %q]", zone("a"), zone("b"))),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_preflight.stack", tfjsonpath.New("fits"), knownvalue.Bool(true)),
			},
		}},
	})
}
