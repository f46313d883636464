package provider_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

// An autoscaling pool that launches spot nodes gets the spot-interruption handler in the user
// data of its scaling configuration (read back from the node the group launched); every
// autoscaling pool registers its nodes with a provider id for the Cluster Autoscaler; an
// autoscaling pool whose nodes are all pay-as-you-go gets no handler.
func TestAccNodePoolAutoscaling_spotInterruptionHandler(t *testing.T) {
	emu := acctest.StartEmulator(t)
	k8s := `
  kubernetes = {
    api_endpoint = "10.0.0.10:6443"
    join_token   = "` + testJoinToken + `"
    ca_cert_hash = "sha256:` + strings.Repeat("ab", 32) + `"
  }`
	config := emu.Config() + poolNetworkConfig("") + autoscalingPoolConfig(`spot        = { strategy = "SpotAsPriceGo" }
  autoscaling = { min_size = 1, max_size = 10, on_demand_percentage = 50 }`+k8s) + `
resource "gpucluster_node_pool" "steady" {
  name          = "steady"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  spot          = { strategy = "SpotAsPriceGo" }
  autoscaling   = { min_size = 1, max_size = 4, on_demand_percentage = 100 }` + k8s + `
}
`
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeTestCheckFunc(
				checkUserData(emu, "gpucluster_node_pool.train", []string{bootstrap.SpotHandlerScriptPath, bootstrap.SpotMetadataPath,
					"systemctl enable --now gpucluster-spot-interruption.service", "--provider-id=${region}.${instance}"}, nil),
				checkUserData(emu, "gpucluster_node_pool.steady", []string{"--provider-id=${region}.${instance}"},
					[]string{bootstrap.SpotHandlerScriptPath}),
			),
		}},
	})
}
