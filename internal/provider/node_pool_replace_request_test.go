package provider_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ecsmetadata"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/gpuhealthagent"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// TestAccNodePool_gpuHealthReplaceRequest: the GPU health agent on a fixed pool's node, signing
// with the node's RAM role from the emulator's metadata service, tags the node's instance for
// replacement; the refresh records why on that node, the plan shows the pool's nodes replaced,
// the apply releases that instance (and its tag with it) and brings a new node, and the next plan
// is empty.
func TestAccNodePool_gpuHealthReplaceRequest(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := emu.Config() + poolNetworkConfig("") + poolConfig(2, `ram_role_name = "gpucluster-gpu-node"`)
	var failing string
	const reason = "XID 79 on GPU 1"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: config, Check: checkInstances(emu, 2)},
			{
				PreConfig: func() {
					live := liveInstanceIDs(emu)
					slices.Sort(live)
					failing = live[0]
					agent := gpuhealthagent.InstanceReplacer{
						Metadata:      ecsmetadata.Client{Endpoint: emu.URL + emulator.MetadataPath + "/" + failing},
						CloudEndpoint: emu.URL,
					}
					node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "train-0"}} // a fixed pool's node: no provider id
					if err := agent.Replace(context.Background(), node, reason); err != nil {
						t.Fatalf("the agent's request: %v", err)
					}
				},
				RefreshState: true,
				// The plan after the refresh replaces the tagged node: shown by the next step.
				ExpectNonEmptyPlan: true,
				Check: func(s *terraform.State) error {
					got := replaceRequestsInState(s)
					if len(got) != 1 || got[failing] != reason {
						return fmt.Errorf("the refreshed nodes ask for replacement %v, want %s: %q", got, failing, reason)
					}
					return nil
				},
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes")),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 2),
					checkStateHoldsLiveInstances(emu, "gpucluster_node_pool.train"),
					func(s *terraform.State) error {
						if slices.Contains(liveInstanceIDs(emu), failing) {
							return fmt.Errorf("instance %s, tagged for replacement, is still there", failing)
						}
						if got := replaceRequestsInState(s); len(got) != 0 {
							return fmt.Errorf("after the apply the nodes still ask for replacement: %v", got)
						}
						tagged, err := emulatorCloud(t, emu).ListInstancesByTags(context.Background(), map[string]string{tagging.ReplaceRequested: reason})
						if err != nil || len(tagged) != 0 {
							return fmt.Errorf("instances tagged %s after the apply: %+v, %v", tagging.ReplaceRequested, tagged, err)
						}
						return nil
					},
				),
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// replaceRequestsInState reads the pool's nodes' replace_requested from the state, as id: reason.
func replaceRequestsInState(s *terraform.State) map[string]string {
	a := s.RootModule().Resources["gpucluster_node_pool.train"].Primary.Attributes
	out := map[string]string{}
	for i := 0; ; i++ {
		id, ok := a[fmt.Sprintf("nodes.%d.id", i)]
		if !ok {
			return out
		}
		if why := a[fmt.Sprintf("nodes.%d.replace_requested", i)]; why != "" {
			out[id] = why
		}
	}
}

// emulatorCloud is the project's cloud client on the test's emulator.
func emulatorCloud(t *testing.T, emu *acctest.Emulator) *cloud.Client {
	c, err := cloud.New(context.Background(), cloud.Config{Region: acctest.Region, Endpoint: emu.URL,
		Credentials: cloud.Credentials{AccessKeyID: acctest.AccessKey, AccessKeySecret: acctest.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
