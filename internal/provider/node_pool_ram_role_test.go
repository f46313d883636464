package provider_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// ram_role_name reaches the scaling configuration the group launches from (read back with the
// ESS SDK, as the Cluster Autoscaler reads it), and changing it makes a new configuration; a name
// RAM would refuse fails at plan, naming the attribute.
func TestAccNodePool_ramRoleName(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := func(role string) string {
		return emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 0, max_size = 5 }
  ram_role_name = "`+role+`"`)
	}
	roleOfActiveConfiguration := func(want string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			group := s.RootModule().Resources["gpucluster_node_pool.train"].Primary.Attributes["scaling_group_id"]
			c := emulatorESS(emu)
			g := ess.CreateDescribeScalingGroupsRequest()
			g.RegionId, g.ScalingGroupId = acctest.Region, &[]string{group}
			gr, err := c.DescribeScalingGroups(g)
			if err != nil || len(gr.ScalingGroups.ScalingGroup) != 1 {
				return fmt.Errorf("DescribeScalingGroups %s: %v", group, err)
			}
			active := gr.ScalingGroups.ScalingGroup[0].ActiveScalingConfigurationId
			d := ess.CreateDescribeScalingConfigurationsRequest()
			d.RegionId, d.ScalingGroupId = acctest.Region, group
			dr, err := c.DescribeScalingConfigurations(d)
			if err != nil {
				return err
			}
			for _, cf := range dr.ScalingConfigurations.ScalingConfiguration {
				if cf.ScalingConfigurationId == active {
					if cf.RamRoleName != want {
						return fmt.Errorf("the active configuration %s has RAM role %q, want %q", active, cf.RamRoleName, want)
					}
					return nil
				}
			}
			return fmt.Errorf("active configuration %s not listed", active)
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: config("bad role!"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)ram_role_name.*must be 1-64 letters`)},
			{Config: config("gpucluster-control-plane"), Check: roleOfActiveConfiguration("gpucluster-control-plane")},
			{Config: config("gpucluster-other"), Check: roleOfActiveConfiguration("gpucluster-other")},
		},
	})
}

// A fixed pool's nodes are started with the pool's ram_role_name: every node carries the role,
// read back with the ECS SDK's DescribeInstanceRamRole (what the instance metadata server hands
// credentials out by). A new role is a new node spec: the nodes are replaced, and the new ones
// carry the new role.
func TestAccNodePool_ramRoleNameFixedPool(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := func(role string) string {
		return emu.Config() + poolNetworkConfig("") + poolConfig(2, `ram_role_name = "`+role+`"`)
	}
	var first []string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: config("gpucluster-control-plane"), Check: resource.ComposeTestCheckFunc(
				checkInstances(emu, 2),
				checkNodesHaveRole(emu, "gpucluster_node_pool.train", "gpucluster-control-plane", &first),
			)},
			{Config: config("gpucluster-other"), Check: resource.ComposeTestCheckFunc(
				checkInstances(emu, 2),
				checkNodesHaveRole(emu, "gpucluster_node_pool.train", "gpucluster-other", nil),
				func(s *terraform.State) error {
					ids, err := poolNodeIDs(s, "gpucluster_node_pool.train")
					if err != nil {
						return err
					}
					for _, id := range ids {
						if slices.Contains(first, id) {
							return fmt.Errorf("node %s outlived the change of ram_role_name: it still has the old role", id)
						}
					}
					return nil
				},
			)},
		},
	})
}

// checkNodesHaveRole asks ECS, through the SDK's DescribeInstanceRamRole, which RAM role each of
// the pool's nodes carries, and wants role on every one; with into set, it keeps the node ids.
func checkNodesHaveRole(emu *acctest.Emulator, addr, role string, into *[]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ids, err := poolNodeIDs(s, addr)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return fmt.Errorf("%s has no nodes in state", addr)
		}
		req := ecs.CreateDescribeInstanceRamRoleRequest()
		req.RegionId = acctest.Region
		req.InstanceIds = `["` + strings.Join(ids, `","`) + `"]`
		req.PageSize = "50"
		resp, err := emulatorECS(emu).DescribeInstanceRamRole(req)
		if err != nil {
			return fmt.Errorf("DescribeInstanceRamRole %v: %w", ids, err)
		}
		got := map[string]string{}
		for _, set := range resp.InstanceRamRoleSets.InstanceRamRoleSet {
			got[set.InstanceId] = set.RamRoleName
		}
		for _, id := range ids {
			if got[id] != role {
				return fmt.Errorf("node %s has RAM role %q, want %q (ECS answered %v)", id, got[id], role, got)
			}
		}
		if into != nil {
			*into = ids
		}
		return nil
	}
}
