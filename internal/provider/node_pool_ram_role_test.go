package provider_test

import (
	"fmt"
	"regexp"
	"testing"

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
