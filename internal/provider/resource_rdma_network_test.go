package provider_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

const netAddr = "gpucluster_rdma_network.test"

// netConfig is a network in zones a and b of the test region.
func netConfig(providerBlock, name, admins, extra string) string {
	return providerBlock + fmt.Sprintf(`
resource "gpucluster_rdma_network" "test" {
  name        = %[1]q
  cidr_block  = "10.20.0.0/16"
  zone_ids    = ["%[2]s-a", "%[2]s-b"]
  admin_cidrs = [%[3]s]
%[4]s
}
`, name, acctest.Region, admins, extra)
}

func TestAccRDMANetwork_basic(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := netConfig(emu.Config(), "train-net", `"203.0.113.0/24"`, `
  placement        = "low_latency"
  placement_groups = 2
  erdma            = true
  hpc_cluster      = true
  tags             = { team = "llm" }
`)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNetworkDestroyed(emu, nil),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^sg-`))),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("vpc_managed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("vswitch_cidrs"), knownvalue.MapExact(map[string]knownvalue.Check{
						acctest.Region + "-a": knownvalue.StringExact("10.20.0.0/17"),
						acctest.Region + "-b": knownvalue.StringExact("10.20.128.0/17"),
					})),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("vswitch_ids"), knownvalue.MapSizeExact(2)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("deployment_set_ids"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("placement_group_size"), knownvalue.Int64Exact(20)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("hpc_cluster_id"), knownvalue.StringRegexp(regexp.MustCompile(`^hpc-`))),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("nccl_env"), knownvalue.MapPartial(map[string]knownvalue.Check{
						"NCCL_IB_DISABLE":    knownvalue.StringExact("0"),
						"NCCL_IB_HCA":        knownvalue.StringExact("erdma_0"),
						"NCCL_SOCKET_IFNAME": knownvalue.StringExact("eth0"),
						"NCCL_IB_GID_INDEX":  knownvalue.StringExact("1"),
					})),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("bandwidth_plan"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"compute_gbps": knownvalue.Int64Exact(100), "storage_gbps": knownvalue.Int64Exact(25),
						"public_gbps": knownvalue.Int64Exact(10), "latency_target_us": knownvalue.Int64Exact(1),
					})),
					// 1 member rule + SSH and 6443 from one admin block + 3 private-range drops.
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("security_group_rules"), knownvalue.ListSizeExact(6)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("admin_cidrs"), knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("203.0.113.0/24")})),
				},
				Check: func(s *terraform.State) error {
					id := s.RootModule().Resources[netAddr].Primary.ID
					res := emulatorResources(t, emu)
					if len(res.Vpcs) != 1 || len(res.VSwitches) != 2 || len(res.SecurityGroups) != 1 || len(res.DeploymentSets) != 2 || len(res.HpcClusters) != 1 {
						return fmt.Errorf("emulator holds %d VPCs, %d vSwitches, %d security groups, %d deployment sets, %d HPC clusters; want 1, 2, 1, 2, 1",
							len(res.Vpcs), len(res.VSwitches), len(res.SecurityGroups), len(res.DeploymentSets), len(res.HpcClusters))
					}
					for _, ds := range res.DeploymentSets {
						if ds["strategy"] != "LowLatency" {
							return fmt.Errorf("deployment set %v is not LowLatency", ds)
						}
					}
					for _, kind := range [][]map[string]any{res.Vpcs, res.VSwitches, res.SecurityGroups} {
						for _, o := range kind {
							tags, _ := o["tags"].(map[string]any)
							if tags["gpucluster:managed-by"] != "terraform-provider-gpucluster" || tags["gpucluster:network"] != "train-net" || tags["team"] != "llm" {
								return fmt.Errorf("%v lacks the provider's tags or the user's", o)
							}
						}
					}
					for _, sw := range res.VSwitches {
						if tags, _ := sw["tags"].(map[string]any); tags["gpucluster:network-id"] != id {
							return fmt.Errorf("vSwitch %v does not carry gpucluster:network-id=%s", sw, id)
						}
					}
					return checkRules(t, emu, id, []string{"203.0.113.0/24"})
				},
			},
			{
				ResourceName:      netAddr,
				ImportState:       true,
				ImportStateVerify: true,
			},
		},
	})
}

func TestAccRDMANetwork_updateAdminCIDRs(t *testing.T) {
	emu := acctest.StartEmulator(t)
	rec := newActionRecorder(t, emu.URL)
	block := acctest.ProviderBlock(rec.URL, acctest.AccessKey, acctest.SecretKey)
	var id string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNetworkDestroyed(emu, nil),
		Steps: []resource.TestStep{
			{
				Config: netConfig(block, "sim-net", `"198.51.100.0/24"`, ""),
				Check: func(s *terraform.State) error {
					id = s.RootModule().Resources[netAddr].Primary.ID
					return checkRules(t, emu, id, []string{"198.51.100.0/24"})
				},
			},
			{
				PreConfig: rec.Reset,
				Config:    netConfig(block, "sim-net", `"203.0.113.0/24", "10.99.0.0/16"`, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(netAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("security_group_rules"), knownvalue.ListSizeExact(8)),
				},
				Check: func(s *terraform.State) error {
					if got := s.RootModule().Resources[netAddr].Primary.ID; got != id {
						return fmt.Errorf("the network was replaced (%s -> %s); admin_cidrs must update in place", id, got)
					}
					if err := checkRules(t, emu, id, []string{"10.99.0.0/16", "203.0.113.0/24"}); err != nil {
						return err
					}
					// New access is authorised before the old is revoked.
					actions := rec.Actions()
					auth := slices.Index(actions, "AuthorizeSecurityGroup")
					revoke := slices.Index(actions, "RevokeSecurityGroup")
					if auth < 0 || revoke < 0 || auth > revoke {
						return fmt.Errorf("want AuthorizeSecurityGroup before RevokeSecurityGroup, got %v", actions)
					}
					return nil
				},
			},
			{
				// Down to no admin access at all: only member and deny rules remain.
				Config: netConfig(block, "sim-net", ``, ""),
				Check: func(s *terraform.State) error {
					return checkRules(t, emu, id, nil)
				},
			},
		},
	})
}

func TestAccRDMANetwork_disappears(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNetworkDestroyed(emu, nil),
		Steps: []resource.TestStep{
			{
				Config: netConfig(emu.Config(), "md-net", `"203.0.113.0/24"`, `  placement = "spread"`),
				Check: func(s *terraform.State) error {
					// Behind Terraform's back, the whole network goes, VPC last.
					deleteNetworkOutOfBand(t, emu, s.RootModule().Resources[netAddr].Primary)
					return nil
				},
				ExpectNonEmptyPlan: true,
			},
			{
				// The next plan creates it again.
				Config: netConfig(emu.Config(), "md-net", `"203.0.113.0/24"`, `  placement = "spread"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(netAddr, plancheck.ResourceActionCreate),
				}},
			},
		},
	})
}

func TestAccRDMANetwork_ruleDrift(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := netConfig(emu.Config(), "drift-net", `"203.0.113.0/24"`, "")
	var id string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNetworkDestroyed(emu, nil),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					id = s.RootModule().Resources[netAddr].Primary.ID
					return nil
				},
			},
			{
				// Someone revokes the SSH rule and the member rule in the console.
				PreConfig: func() {
					c := ecsClient(t, emu)
					for _, p := range []ecs.RevokeSecurityGroupPermissions{
						{IpProtocol: "TCP", PortRange: "22/22", SourceCidrIp: "203.0.113.0/24", Policy: "accept", Priority: "1"},
						{IpProtocol: "ALL", PortRange: "-1/-1", SourceGroupId: id, Policy: "accept", Priority: "1"},
					} {
						req := ecs.CreateRevokeSecurityGroupRequest()
						req.RegionId = acctest.Region
						req.SecurityGroupId = id
						req.Permissions = &[]ecs.RevokeSecurityGroupPermissions{p}
						if _, err := c.RevokeSecurityGroup(req); err != nil {
							t.Fatalf("revoking a rule behind Terraform's back: %v", err)
						}
					}
					if err := checkRules(t, emu, id, []string{"203.0.113.0/24"}); err == nil {
						t.Fatal("the out-of-band revoke did not take")
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(netAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					return checkRules(t, emu, id, []string{"203.0.113.0/24"})
				},
			},
		},
	})
}

func TestAccRDMANetwork_existingVPC(t *testing.T) {
	emu := acctest.StartEmulator(t)
	vc := vpcClient(t, emu)
	req := vpc.CreateCreateVpcRequest()
	req.RegionId = acctest.Region
	req.CidrBlock = "10.50.0.0/16"
	req.VpcName = "research-zone"
	out, err := vc.CreateVpc(req)
	if err != nil {
		t.Fatalf("creating the existing VPC: %v", err)
	}
	vpcID := out.VpcId
	waitVPCAvailable(t, vc, vpcID)

	config := emu.Config() + fmt.Sprintf(`
resource "gpucluster_rdma_network" "test" {
  name          = "shared-net"
  vpc_id        = %q
  cidr_block    = "10.50.8.0/21"
  zone_ids      = ["%[2]s-a"]
  vswitch_cidrs = { "%[2]s-a" = "10.50.8.0/24" }
  admin_cidrs   = ["10.50.0.0/24"]
}
`, vpcID, acctest.Region)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNetworkDestroyed(emu, []string{vpcID}),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("vpc_id"), knownvalue.StringExact(vpcID)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("vpc_managed"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("nccl_env"), knownvalue.MapExact(map[string]knownvalue.Check{
						"NCCL_IB_DISABLE": knownvalue.StringExact("1"),
					})),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("deployment_set_ids"), knownvalue.ListSizeExact(0)),
				},
				Check: func(s *terraform.State) error {
					if res := emulatorResources(t, emu); len(res.Vpcs) != 1 {
						return fmt.Errorf("emulator holds %d VPCs; the network must reuse %s, not create one", len(res.Vpcs), vpcID)
					}
					return nil
				},
			},
			{ResourceName: netAddr, ImportState: true, ImportStateVerify: true},
		},
	})
	// The reused VPC outlives the network; delete it so the emulator ends empty.
	del := vpc.CreateDeleteVpcRequest()
	del.RegionId = acctest.Region
	del.VpcId = vpcID
	if _, err := vc.DeleteVpc(del); err != nil {
		t.Fatalf("deleting VPC %s after the network was destroyed (something still depends on it?): %v", vpcID, err)
	}
}

func TestAccRDMANetwork_planTimeErrors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	network := func(cidr, zones, extra string) string {
		return emu.Config() + fmt.Sprintf(`
resource "gpucluster_rdma_network" "test" {
  name       = "bad-net"
  cidr_block = %q
  zone_ids   = [%s]
%s
}
`, cidr, zones, extra)
	}
	ab := fmt.Sprintf(`"%[1]s-a", "%[1]s-b"`, acctest.Region)
	steps := []resource.TestStep{
		{
			Config:      network("10.0.0.0/16", ab, fmt.Sprintf(`  vswitch_cidrs = { "%[1]s-a" = "10.0.0.0/20", "%[1]s-b" = "10.0.8.0/24" }`, acctest.Region)),
			ExpectError: regexp.MustCompile(`(?s)Invalid vswitch_cidrs.*10\.0\.8\.0/24 \(zone\s+cn-wulanchabu-b\)\s+overlaps\s+10\.0\.0\.0/20`),
		},
		{
			Config:      network("10.0.0.0/16", ab, fmt.Sprintf(`  vswitch_cidrs = { "%[1]s-a" = "10.0.0.0/24", "%[1]s-b" = "10.1.0.0/24" }`, acctest.Region)),
			ExpectError: regexp.MustCompile(`(?s)Invalid vswitch_cidrs.*10\.1\.0\.0/24 is outside\s+cidr_block\s+10\.0\.0\.0/16`),
		},
		{
			Config:      network("8.8.0.0/16", ab, ""),
			ExpectError: regexp.MustCompile(`(?s)Invalid cidr_block.*8\.8\.0\.0/16 is not a private\s+range`),
		},
		{
			Config:      network("10.0.0.0/16", `"cn-hangzhou-a"`, ""),
			ExpectError: regexp.MustCompile(`(?s)Zones outside the provider's region.*cn-hangzhou-a.*cn-wulanchabu`),
		},
		{
			Config:      network("10.0.0.0/16", fmt.Sprintf(`"%s-q"`, acctest.Region), ""),
			ExpectError: regexp.MustCompile(`(?s)Unknown zone.*cn-wulanchabu-q does not\s+exist`),
		},
		{
			Config:      network("10.0.0.0/16", ab, `  admin_cidrs = ["0.0.0.0/0"]`),
			ExpectError: regexp.MustCompile(`(?s)0\.0\.0\.0/0 in admin_cidrs without\s+allow_public_ssh`),
		},
		{
			Config:      network("10.0.0.0/16", ab, `  vpc_id = "vpc-doesnotexist"`),
			ExpectError: regexp.MustCompile(`(?s)VPC not found.*vpc-doesnotexist`),
		},
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps:                    steps,
	})
	// Nothing was created: no create call reached the emulator and it holds nothing.
	for action, n := range emu.Stats().Calls {
		if strings.HasPrefix(action, "Create") || strings.HasPrefix(action, "Authorize") {
			t.Errorf("a plan-time error still let %d %s call(s) through", n, action)
		}
	}
	if err := checkNetworkDestroyed(emu, nil)(nil); err != nil {
		t.Error(err)
	}
}

// --- helpers ---

// emulatorResources reads GET /_emulator/resources, as an outside observer would.
func emulatorResources(t *testing.T, emu *acctest.Emulator) resourcesView {
	t.Helper()
	resp, err := http.Get(emu.URL + "/_emulator/resources")
	if err != nil {
		t.Fatalf("GET /_emulator/resources: %v", err)
	}
	defer resp.Body.Close()
	var out resourcesView
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decoding /_emulator/resources: %v", err)
	}
	return out
}

type resourcesView struct {
	Vpcs           []map[string]any `json:"vpcs"`
	VSwitches      []map[string]any `json:"vswitches"`
	SecurityGroups []map[string]any `json:"security_groups"`
	DeploymentSets []map[string]any `json:"deployment_sets"`
	HpcClusters    []map[string]any `json:"hpc_clusters"`
	NatGateways    []map[string]any `json:"nat_gateways"`
	SnatEntries    []map[string]any `json:"snat_entries"`
	EIPs           []map[string]any `json:"eips"`
}

// checkNetworkDestroyed is a CheckDestroy: the emulator holds no network object, except the
// VPCs listed in keep (reused ones, which the network must not delete).
func checkNetworkDestroyed(emu *acctest.Emulator, keep []string) func(*terraform.State) error {
	return func(*terraform.State) error {
		resp, err := http.Get(emu.URL + "/_emulator/resources")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var res resourcesView
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
			return err
		}
		var vpcs []string
		for _, v := range res.Vpcs {
			vpcs = append(vpcs, v["id"].(string))
		}
		sort.Strings(vpcs)
		if !slices.Equal(vpcs, keep) && !(len(vpcs) == 0 && len(keep) == 0) {
			return fmt.Errorf("VPCs left after destroy: %v (want exactly %v)", vpcs, keep)
		}
		if n := len(res.VSwitches) + len(res.SecurityGroups) + len(res.DeploymentSets) + len(res.HpcClusters) +
			len(res.NatGateways) + len(res.SnatEntries) + len(res.EIPs); n > 0 {
			return fmt.Errorf("left behind after destroy: vSwitches %v, security groups %v, deployment sets %v, HPC clusters %v, NAT gateways %v, SNAT entries %v, EIPs %v",
				res.VSwitches, res.SecurityGroups, res.DeploymentSets, res.HpcClusters, res.NatGateways, res.SnatEntries, res.EIPs)
		}
		return nil
	}
}

func sdkEndpoint(t *testing.T, emu *acctest.Emulator) string {
	u, err := url.Parse(emu.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func ecsClient(t *testing.T, emu *acctest.Emulator) *ecs.Client {
	t.Helper()
	c, err := ecs.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	c.Domain = sdkEndpoint(t, emu)
	c.GetConfig().Scheme = "HTTP"
	return c
}

func vpcClient(t *testing.T, emu *acctest.Emulator) *vpc.Client {
	t.Helper()
	c, err := vpc.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	c.Domain = sdkEndpoint(t, emu)
	c.GetConfig().Scheme = "HTTP"
	return c
}

func waitVPCAvailable(t *testing.T, c *vpc.Client, id string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req := vpc.CreateDescribeVpcsRequest()
		req.RegionId = acctest.Region
		req.VpcId = id
		out, err := c.DescribeVpcs(req)
		if err != nil {
			t.Fatalf("describing VPC %s: %v", id, err)
		}
		if len(out.Vpcs.Vpc) == 1 && out.Vpcs.Vpc[0].Status == "Available" {
			return
		}
	}
	t.Fatalf("VPC %s never became Available", id)
}

// checkRules asserts, through the emulator's API, that the group's ingress rules are exactly the
// member rule, SSH and 6443 from each admin block, and the three private-range drops at a lower
// priority.
func checkRules(t *testing.T, emu *acctest.Emulator, sgID string, admins []string) error {
	t.Helper()
	req := ecs.CreateDescribeSecurityGroupAttributeRequest()
	req.RegionId = acctest.Region
	req.SecurityGroupId = sgID
	req.Direction = "ingress"
	out, err := ecsClient(t, emu).DescribeSecurityGroupAttribute(req)
	if err != nil {
		return fmt.Errorf("describing security group %s: %w", sgID, err)
	}
	var got []string
	for _, p := range out.Permissions.Permission {
		src := p.SourceCidrIp
		if p.SourceGroupId != "" {
			src = p.SourceGroupId
		}
		got = append(got, fmt.Sprintf("%s %s %s from %s prio %s", p.Policy, p.IpProtocol, p.PortRange, src, p.Priority))
	}
	want := []string{fmt.Sprintf("accept ALL -1/-1 from %s prio 1", sgID)}
	for _, a := range admins {
		want = append(want, fmt.Sprintf("accept TCP 22/22 from %s prio 1", a), fmt.Sprintf("accept TCP 6443/6443 from %s prio 1", a))
	}
	for _, d := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"} {
		want = append(want, fmt.Sprintf("drop ALL -1/-1 from %s prio 100", d))
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("security group %s rules:\n got %q\nwant %q", sgID, got, want)
	}
	return nil
}

// deleteNetworkOutOfBand deletes a network's objects with the plain SDK, in dependency order.
func deleteNetworkOutOfBand(t *testing.T, emu *acctest.Emulator, st *terraform.InstanceState) {
	t.Helper()
	ec, vc := ecsClient(t, emu), vpcClient(t, emu)
	for k, v := range st.Attributes {
		if strings.HasPrefix(k, "deployment_set_ids.") && k != "deployment_set_ids.#" {
			req := ecs.CreateDeleteDeploymentSetRequest()
			req.RegionId = acctest.Region
			req.DeploymentSetId = v
			if _, err := ec.DeleteDeploymentSet(req); err != nil {
				t.Fatalf("deleting deployment set %s: %v", v, err)
			}
		}
	}
	if id := st.Attributes["egress.nat_gateway_id"]; id != "" {
		// Force: the service deletes the SNAT entries and unbinds the EIP itself.
		req := vpc.CreateDeleteNatGatewayRequest()
		req.RegionId = acctest.Region
		req.NatGatewayId = id
		req.Force = requests.NewBoolean(true)
		if _, err := vc.DeleteNatGateway(req); err != nil {
			t.Fatalf("deleting NAT gateway %s: %v", id, err)
		}
	}
	if id := st.Attributes["egress.eip_id"]; id != "" {
		retryOutOfBand(t, "releasing EIP "+id, func() error {
			req := vpc.CreateReleaseEipAddressRequest()
			req.RegionId = acctest.Region
			req.AllocationId = id
			_, err := vc.ReleaseEipAddress(req)
			return err
		})
	}
	sg := ecs.CreateDeleteSecurityGroupRequest()
	sg.RegionId = acctest.Region
	sg.SecurityGroupId = st.ID
	if _, err := ec.DeleteSecurityGroup(sg); err != nil {
		t.Fatalf("deleting security group %s: %v", st.ID, err)
	}
	for k, v := range st.Attributes {
		if strings.HasPrefix(k, "vswitch_ids.") && k != "vswitch_ids.%" {
			retryOutOfBand(t, "deleting vSwitch "+v, func() error {
				req := vpc.CreateDeleteVSwitchRequest()
				req.RegionId = acctest.Region
				req.VSwitchId = v
				_, err := vc.DeleteVSwitch(req)
				return err
			})
		}
	}
	req := vpc.CreateDeleteVpcRequest()
	req.RegionId = acctest.Region
	req.VpcId = st.Attributes["vpc_id"]
	if _, err := vc.DeleteVpc(req); err != nil {
		t.Fatalf("deleting VPC %s: %v", req.VpcId, err)
	}
}

// retryOutOfBand retries a call of deleteNetworkOutOfBand while what it depends on is still
// going (a NAT gateway or EIP settling asynchronously), for up to 30 seconds.
func retryOutOfBand(t *testing.T, what string, call func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := call()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !regexp.MustCompile(`DependencyViolation|IncorrectEipStatus|IncorrectStatus`).MatchString(err.Error()) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// actionRecorder is a reverse proxy in front of the emulator that records the order of API
// actions, to check that rules are authorised before they are revoked.
type actionRecorder struct {
	URL     string
	mu      sync.Mutex
	actions []string
}

func newActionRecorder(t *testing.T, target string) *actionRecorder {
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	rec := &actionRecorder{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action := r.URL.Query().Get("Action")
		if action == "" {
			action = r.Header.Get("x-acs-action")
		}
		rec.mu.Lock()
		rec.actions = append(rec.actions, action)
		rec.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	rec.URL = front.URL
	return rec
}

func (r *actionRecorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = nil
}

func (r *actionRecorder) Actions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.actions...)
}

func TestAccRDMANetwork_renameAndRetag(t *testing.T) {
	emu := acctest.StartEmulator(t)
	var id string
	sameID := func(s *terraform.State) error {
		if got := s.RootModule().Resources[netAddr].Primary.ID; got != id {
			return fmt.Errorf("the network was replaced (%s -> %s); name and tags must update in place", id, got)
		}
		return nil
	}
	inPlace := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(netAddr, plancheck.ResourceActionUpdate),
	}}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNetworkDestroyed(emu, nil),
		Steps: []resource.TestStep{
			{
				Config: netConfig(emu.Config(), "old-net", `"203.0.113.0/24"`, `  tags = { team = "llm", stale = "yes" }`),
				Check: func(s *terraform.State) error {
					id = s.RootModule().Resources[netAddr].Primary.ID
					return checkNetworkCloud(t, emu, s.RootModule().Resources[netAddr].Primary, "old-net",
						map[string]string{"team": "llm", "stale": "yes"})
				},
			},
			{
				Config:           netConfig(emu.Config(), "new-net", `"203.0.113.0/24"`, `  tags = { team = "hpc", owner = "lab" }`),
				ConfigPlanChecks: inPlace,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("name"), knownvalue.StringExact("new-net")),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("tags"), knownvalue.MapExact(map[string]knownvalue.Check{
						"team": knownvalue.StringExact("hpc"), "owner": knownvalue.StringExact("lab"),
					})),
				},
				Check: resource.ComposeTestCheckFunc(sameID, func(s *terraform.State) error {
					return checkNetworkCloud(t, emu, s.RootModule().Resources[netAddr].Primary, "new-net",
						map[string]string{"team": "hpc", "owner": "lab"})
				}),
			},
			{
				ResourceName:      netAddr,
				ImportState:       true,
				ImportStateVerify: true,
			},
			{
				// Dropping every user tag keeps only the provider's own.
				Config:           netConfig(emu.Config(), "new-net", `"203.0.113.0/24"`, ""),
				ConfigPlanChecks: inPlace,
				Check: resource.ComposeTestCheckFunc(sameID, func(s *terraform.State) error {
					return checkNetworkCloud(t, emu, s.RootModule().Resources[netAddr].Primary, "new-net", map[string]string{})
				}),
			},
		},
	})
}

// checkNetworkCloud asserts through the real SDK that the network's VPC, vSwitches and security
// group carry the given name (vSwitches: "<name>-<zone>") and exactly the user tags given plus the
// provider's reserved ones.
func checkNetworkCloud(t *testing.T, emu *acctest.Emulator, st *terraform.InstanceState, name string, userTags map[string]string) error {
	t.Helper()
	ec, vc := ecsClient(t, emu), vpcClient(t, emu)
	id, vpcID := st.ID, st.Attributes["vpc_id"]
	check := func(what, gotName, wantName string, tags map[string]string, networkID bool) error {
		if gotName != wantName {
			return fmt.Errorf("%s is named %q, want %q", what, gotName, wantName)
		}
		user := map[string]string{}
		for k, v := range tags {
			if !strings.HasPrefix(k, "gpucluster:") {
				user[k] = v
			}
		}
		if fmt.Sprint(user) != fmt.Sprint(userTags) {
			return fmt.Errorf("%s carries user tags %v, want %v", what, user, userTags)
		}
		if tags["gpucluster:network"] != name || tags["gpucluster:managed-by"] != "terraform-provider-gpucluster" {
			return fmt.Errorf("%s carries reserved tags %v, want gpucluster:network=%s", what, tags, name)
		}
		if networkID && tags["gpucluster:network-id"] != id {
			return fmt.Errorf("%s lacks gpucluster:network-id=%s: %v", what, id, tags)
		}
		return nil
	}
	vpcTagMap := func(ts []vpc.Tag) map[string]string {
		m := map[string]string{}
		for _, tg := range ts {
			m[tg.Key] = tg.Value
		}
		return m
	}

	dv := vpc.CreateDescribeVpcsRequest()
	dv.RegionId, dv.VpcId = acctest.Region, vpcID
	vpcs, err := vc.DescribeVpcs(dv)
	if err != nil {
		return fmt.Errorf("describing VPC %s: %w", vpcID, err)
	}
	if len(vpcs.Vpcs.Vpc) != 1 {
		return fmt.Errorf("VPC %s: %d found", vpcID, len(vpcs.Vpcs.Vpc))
	}
	v := vpcs.Vpcs.Vpc[0]
	if err := check("VPC "+vpcID, v.VpcName, name, vpcTagMap(v.Tags.Tag), false); err != nil {
		return err
	}

	ds := vpc.CreateDescribeVSwitchesRequest()
	ds.RegionId, ds.VpcId, ds.PageSize = acctest.Region, vpcID, "50"
	sws, err := vc.DescribeVSwitches(ds)
	if err != nil {
		return fmt.Errorf("describing vSwitches of %s: %w", vpcID, err)
	}
	if len(sws.VSwitches.VSwitch) != 2 {
		return fmt.Errorf("VPC %s has %d vSwitches, want 2", vpcID, len(sws.VSwitches.VSwitch))
	}
	for _, sw := range sws.VSwitches.VSwitch {
		if st.Attributes["vswitch_ids."+sw.ZoneId] != sw.VSwitchId {
			return fmt.Errorf("vSwitch %s in %s is not the network's", sw.VSwitchId, sw.ZoneId)
		}
		if err := check("vSwitch "+sw.VSwitchId, sw.VSwitchName, name+"-"+sw.ZoneId, vpcTagMap(sw.Tags.Tag), true); err != nil {
			return err
		}
	}
	// The same vSwitches are found by their tags, as the provider finds them.
	ds = vpc.CreateDescribeVSwitchesRequest()
	ds.RegionId, ds.VpcId = acctest.Region, vpcID
	ds.Tag = &[]vpc.DescribeVSwitchesTag{{Key: "gpucluster:network", Value: name}}
	if sws, err = vc.DescribeVSwitches(ds); err != nil || sws.TotalCount != 2 {
		return fmt.Errorf("vSwitches tagged gpucluster:network=%s: %v (err %v)", name, sws, err)
	}

	dg := ecs.CreateDescribeSecurityGroupsRequest()
	dg.RegionId, dg.SecurityGroupId = acctest.Region, id
	gs, err := ec.DescribeSecurityGroups(dg)
	if err != nil {
		return fmt.Errorf("describing security group %s: %w", id, err)
	}
	if len(gs.SecurityGroups.SecurityGroup) != 1 {
		return fmt.Errorf("security group %s: %d found", id, len(gs.SecurityGroups.SecurityGroup))
	}
	g := gs.SecurityGroups.SecurityGroup[0]
	sgTags := map[string]string{}
	for _, tg := range g.Tags.Tag {
		sgTags[tg.TagKey] = tg.TagValue
	}
	if sgTags["gpucluster:options"] == "" {
		return fmt.Errorf("security group %s lost its gpucluster:options tag: %v", id, sgTags)
	}
	return check("security group "+id, g.SecurityGroupName, name, sgTags, false)
}
