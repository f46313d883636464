package provider_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// checkEgressCloud checks the emulator, not the state: one NAT gateway in the network's VPC and
// one of its vSwitches, one EIP of bandwidth mbps bound to it, and exactly one SNAT entry per
// vSwitch of the network translating to the EIP's address; and that the state says the same.
func checkEgressCloud(emu *acctest.Emulator, mbps int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		st := s.RootModule().Resources[netAddr].Primary
		res := emu.Resources()
		if len(res.NatGateways) != 1 || len(res.EIPs) != 1 {
			return fmt.Errorf("emulator holds NAT gateways %v and EIPs %v; want one of each", res.NatGateways, res.EIPs)
		}
		nat, eip := res.NatGateways[0], res.EIPs[0]
		vswitches := map[string]bool{}
		for _, sw := range res.VSwitches {
			vswitches[sw["id"].(string)] = true
		}
		if nat["vpc_id"] != st.Attributes["vpc_id"] || !vswitches[nat["vswitch_id"].(string)] {
			return fmt.Errorf("NAT gateway %v is not in the network's VPC %s and one of its vSwitches", nat, st.Attributes["vpc_id"])
		}
		if tags, _ := nat["tags"].(map[string]string); tags["gpucluster:network-id"] != st.ID {
			return fmt.Errorf("NAT gateway tags %v lack gpucluster:network-id=%s", nat["tags"], st.ID)
		}
		if eip["instance_id"] != nat["id"] || eip["status"] != "InUse" || eip["bandwidth"] != mbps || eip["internet_charge_type"] != "PayByBandwidth" {
			return fmt.Errorf("EIP %v: want InUse on %s, %d Mbit/s, PayByBandwidth", eip, nat["id"], mbps)
		}
		if tags, _ := eip["tags"].(map[string]string); tags["gpucluster:network-id"] != st.ID {
			return fmt.Errorf("EIP tags %v lack gpucluster:network-id=%s", eip["tags"], st.ID)
		}
		var sources []string
		for _, e := range res.SnatEntries {
			if e["nat_gateway_id"] != nat["id"] || e["snat_ip"] != eip["ip_address"] {
				return fmt.Errorf("SNAT entry %v does not translate through %s to %s", e, nat["id"], eip["ip_address"])
			}
			sources = append(sources, e["source_vswitch_id"].(string))
		}
		var want []string
		for id := range vswitches {
			want = append(want, id)
		}
		sort.Strings(sources)
		sort.Strings(want)
		if fmt.Sprint(sources) != fmt.Sprint(want) {
			return fmt.Errorf("SNAT entries translate vSwitches %v; want one per vSwitch %v", sources, want)
		}
		for k, v := range map[string]string{
			"egress.nat_gateway_id": nat["id"].(string), "egress.eip_id": eip["id"].(string),
			"egress.eip_address": eip["ip_address"].(string), "egress.snat_table_id": nat["snat_table_id"].(string),
			"egress.snat_entry_ids.%": fmt.Sprint(len(want)),
		} {
			if st.Attributes[k] != v {
				return fmt.Errorf("state %s = %q; the cloud has %q", k, st.Attributes[k], v)
			}
		}
		return nil
	}
}

// deleteOneSNATEntry deletes the first SNAT entry through the vendor API, as someone in the
// console would.
func deleteOneSNATEntry(t *testing.T, emu *acctest.Emulator) {
	t.Helper()
	entries := emu.Resources().SnatEntries
	if len(entries) == 0 {
		t.Fatal("no SNAT entry to delete")
	}
	req := vpc.CreateDeleteSnatEntryRequest()
	req.RegionId = acctest.Region
	req.SnatTableId = entries[0]["snat_table_id"].(string)
	req.SnatEntryId = entries[0]["id"].(string)
	if _, err := vpcClient(t, emu).DeleteSnatEntry(req); err != nil {
		t.Fatalf("DeleteSnatEntry: %v", err)
	}
}

func TestAccRDMANetwork_egress(t *testing.T) {
	emu := acctest.StartEmulator(t)
	base := netConfig(emu.Config(), "egress-net", `"203.0.113.0/24"`, "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNetworkDestroyed(emu, nil),
		Steps: []resource.TestStep{
			{
				// Default egress of a network that creates its VPC: nat, PayByBandwidth, the
				// scenario's 10 Gbit/s capped at one EIP's 500 Mbit/s.
				Config: base,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("egress").AtMapKey("mode"), knownvalue.StringExact("nat")),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("egress").AtMapKey("internet_charge_type"), knownvalue.StringExact("PayByBandwidth")),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("egress").AtMapKey("bandwidth_mbps"), knownvalue.Int64Exact(500)),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("egress").AtMapKey("nat_gateway_id"), knownvalue.StringRegexp(regexp.MustCompile(`^ngw-`))),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("egress").AtMapKey("eip_id"), knownvalue.StringRegexp(regexp.MustCompile(`^eip-`))),
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("egress").AtMapKey("snat_entry_ids"), knownvalue.MapSizeExact(2)),
				},
				Check: checkEgressCloud(emu, 500),
			},
			{
				ResourceName:      netAddr,
				ImportState:       true,
				ImportStateVerify: true,
			},
			{
				// Drift: an SNAT entry deleted out of band shows in the plan and comes back.
				PreConfig: func() { deleteOneSNATEntry(t, emu) },
				Config:    base,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(netAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(netAddr, tfjsonpath.New("egress").AtMapKey("snat_entry_ids")),
					},
				},
				Check: checkEgressCloud(emu, 500),
			},
			{
				// Bandwidth in place.
				Config: netConfig(emu.Config(), "egress-net", `"203.0.113.0/24"`, `egress = { bandwidth_mbps = 200 }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(netAddr, plancheck.ResourceActionUpdate)},
				},
				Check: checkEgressCloud(emu, 200),
			},
			{
				// nat -> none removes the egress, in place.
				Config: netConfig(emu.Config(), "egress-net", `"203.0.113.0/24"`, `egress = { mode = "none" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(netAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(netAddr, tfjsonpath.New("egress").AtMapKey("nat_gateway_id"), knownvalue.Null()),
				},
				Check: func(*terraform.State) error {
					res := emu.Resources()
					if n := len(res.NatGateways) + len(res.EIPs) + len(res.SnatEntries); n != 0 {
						return fmt.Errorf("egress none left NAT gateways %v, EIPs %v, SNAT entries %v", res.NatGateways, res.EIPs, res.SnatEntries)
					}
					return nil
				},
			},
			{
				// none -> nat builds it again; destroy then leaves nothing.
				Config: base,
				Check:  checkEgressCloud(emu, 500),
			},
		},
	})
}

// mirroredControlPlanePool is a one-node control-plane pool on gpucluster_rdma_network.net whose
// bootstrap (always rendered for a control plane) downloads through the given package_mirror
// ("" leaves it unset); k8sExtra are more lines of its kubernetes block.
func mirroredControlPlanePool(mirror string, k8sExtra ...string) string {
	setting := fmt.Sprintf("package_mirror = %q", mirror)
	if mirror == "" {
		setting = ""
	}
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "control" {
  name           = "control"
  network_id     = gpucluster_rdma_network.net.id
  scenario       = "engineering_simulation"
  instance_type  = "ecs.g7.2xlarge"
  size           = 1
  %s
  kubernetes = {
    role       = "control_plane"
    join_token = "abcdef.0123456789abcdef"
    %s
  }
}
`, setting, strings.Join(k8sExtra, "\n    "))
}

// noEgressControlPlane is a network without egress and a control-plane pool on it.
func noEgressControlPlane(providerBlock, mirror string, k8sExtra ...string) string {
	return providerBlock + poolNetworkConfig(`egress = { mode = "none" }`) + mirroredControlPlanePool(mirror, k8sExtra...)
}

// bothAttributes matches the refusal: it names the pool's package_mirror, the network's
// egress.mode and the fix.
var bothAttributes = regexp.MustCompile(`(?s)package_mirror.*egress\.mode\s+=\s+"none".*mode\s+=\s+"nat"`)

func TestAccNodePool_bootstrapWithoutEgressRefused(t *testing.T) {
	emu := acctest.StartEmulator(t)
	netOnly := emu.Config() + poolNetworkConfig(`egress = { mode = "none" }`)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				// network_id unknown at plan: the pool is refused at the start of its create,
				// before any node is asked for.
				Config:      noEgressControlPlane(emu.Config(), "internet"),
				ExpectError: bothAttributes,
			},
			{
				Config: netOnly,
				Check:  checkInstances(emu, 0),
			},
			{
				// network_id known: refused at plan, the in-VPC mirror notwithstanding, when the
				// images come from the public registries (image_registry = "").
				Config:      noEgressControlPlane(emu.Config(), "alibaba_vpc", `image_registry = ""`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)image_registry = "".*registry\.k8s\.io.*egress\.mode\s+=\s+"none"`),
			},
			{
				Config: netOnly,
				Check:  checkInstances(emu, 0),
			},
			{
				// Everything from inside the VPC (the mainland defaults: the in-VPC mirror and
				// the region's registry-vpc endpoint) needs no route out: planned and made.
				Config: noEgressControlPlane(emu.Config(), ""),
				Check:  checkInstances(emu, 1),
			},
			{
				Config: netOnly,
				Check:  checkInstances(emu, 0),
			},
		},
	})
}

// The data source takes package_mirror into the document and says what still needs the internet.
func TestAccNodeBootstrap_packageMirror(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const config = `
data "gpucluster_node_bootstrap" "cp" {
  role           = "control_plane"
  package_mirror = "alibaba_vpc"
  kubernetes     = { join_token = "abcdef.0123456789abcdef" }
}
`
	ds := "data.gpucluster_node_bootstrap.cp"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("bootstrap_script"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)mirrors\.cloud\.aliyuncs\.com/ubuntu/ jammy main.*/etc/pip\.conf.*apt-get update.*mirrors\.cloud\.aliyuncs\.com/kubernetes-new/`))),
				// Every package comes from the in-VPC mirror.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("internet_sources"), knownvalue.ListExact([]knownvalue.Check{
					// None: in cn-wulanchabu the images come from the region's in-VPC registry too.
				})),
			},
		}},
	})
}

// A pool's package_mirror reaches its nodes' user data, and changing it rolls them.
func TestAccNodePool_packageMirror(t *testing.T) {
	emu := acctest.StartEmulator(t)
	pool := func(mirror string) string {
		return emu.Config() + poolNetworkConfig("") + mirroredControlPlanePool(mirror)
	}
	const addr = "gpucluster_node_pool.control"
	mirrored := []string{"mirrors.cloud.aliyuncs.com/ubuntu/ jammy", "/etc/pip.conf"}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				// Unset in a mainland region (the emulator's cn-wulanchabu): the in-VPC mirror.
				Config: pool(""),
				Check: resource.ComposeTestCheckFunc(checkUserData(emu, addr, mirrored, []string{"pkgs.k8s.io"}),
					resource.TestCheckResourceAttr(addr, "package_mirror", "alibaba_vpc")),
			},
			{
				Config:             pool("alibaba_vpc"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: false,
			},
			{
				Config: pool("internet"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
				},
				Check: checkUserData(emu, addr, []string{"kubeadm init", "https://pkgs.k8s.io/core:/stable:/v1.33/deb/"}, mirrored),
			},
			{
				// Unset again: the pool keeps the mirror it has, and rolls nothing.
				Config:   pool(""),
				PlanOnly: true,
			},
		},
	})
}
