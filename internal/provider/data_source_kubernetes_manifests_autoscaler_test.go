package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// The Cluster Autoscaler of a real autoscaling pool: the data source reads the pool's scaling
// group id from the emulator-created group and names it, with the pool's bounds, in the
// Deployment and in the add-on file; no AccessKey anywhere.
func TestAccKubernetesManifests_clusterAutoscaler(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`autoscaling = { min_size = 0, max_size = 50 }`) + `
data "gpucluster_kubernetes_manifests" "m" {
  scenario      = "ai_training"
  node_count    = 1
  gpus_per_node = 8
  cluster_autoscaler = {
    node_groups = [{
      name             = gpucluster_node_pool.train.name
      scaling_group_id = gpucluster_node_pool.train.scaling_group_id
      min_size         = gpucluster_node_pool.train.autoscaling.min_size
      max_size         = gpucluster_node_pool.train.autoscaling.max_size
    }]
    scale_down_unneeded_time = "20m"
  }
}
`
	ds := "data.gpucluster_kubernetes_manifests.m"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeTestCheckFunc(
				func(s *terraform.State) error {
					group := s.RootModule().Resources["gpucluster_node_pool.train"].Primary.Attributes["scaling_group_id"]
					if !strings.HasPrefix(group, "asg-") {
						return fmt.Errorf("scaling_group_id %q", group)
					}
					attrs := s.RootModule().Resources[ds].Primary.Attributes
					flag := "--nodes=0:50:" + group
					for _, key := range []string{"cluster_autoscaler.yaml", "addons.35-cluster-autoscaler.yaml"} {
						if !strings.Contains(attrs[key], flag) {
							return fmt.Errorf("%s does not name %s:\n%s", key, flag, attrs[key])
						}
						if strings.Contains(attrs[key], "ACCESS_KEY") || strings.Contains(attrs[key], acctest.AccessKey) {
							return fmt.Errorf("%s holds an AccessKey", key)
						}
					}
					return nil
				},
				resource.TestMatchResourceAttr(ds, "cluster_autoscaler.yaml", regexp.MustCompile(`(?s)--cloud-provider=alicloud.*--scale-down-unneeded-time=20m`)),
			),
		}},
	})
}

// Bad autoscaler input fails at plan, naming the attribute.
func TestAccKubernetesManifests_clusterAutoscalerErrors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cfg := func(ca string) string {
		return emu.Config() + `
data "gpucluster_kubernetes_manifests" "x" {
  scenario      = "ai_training"
  node_count    = 1
  gpus_per_node = 8
  cluster_autoscaler = ` + ca + `
}
`
	}
	for _, c := range []struct{ name, ca, want string }{
		{"not a group id", `{ node_groups = [{ name = "a", scaling_group_id = "sg-1", min_size = 0, max_size = 3 }] }`,
			`(?s)cluster_autoscaler\.node_groups\[0\]\.scaling_group_id "sg-1" is not an\s+Auto\s+Scaling\s+group\s+id`},
		{"min over max", `{ node_groups = [{ name = "a", scaling_group_id = "asg-1", min_size = 5, max_size = 3 }] }`,
			`(?s)cluster_autoscaler\.node_groups\[0\] "5\.\.3"\s+is\s+not\s+a\s+node\s+range`},
		{"no groups", `{ node_groups = [] }`, `(?s)node_groups.*at least 1`},
		{"unneeded time", `{ node_groups = [{ name = "a", scaling_group_id = "asg-1", min_size = 0, max_size = 3 }], scale_down_unneeded_time = "ten" }`,
			`(?s)scale_down_unneeded_time "ten"\s+is\s+not\s+a\s+Go\s+duration`},
	} {
		t.Run(c.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
				Steps:                    []resource.TestStep{{Config: cfg(c.ca), ExpectError: regexp.MustCompile(c.want)}},
			})
		})
	}
}
