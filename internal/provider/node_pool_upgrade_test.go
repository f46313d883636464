package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// A pool's Kubernetes release moves one minor at a time: from 1.28, 1.30 is refused at plan
// naming the attribute, the minor skipped, the version skew policy and the steps, and nothing is
// changed; 1.29 plans. A downgrade is refused too.
func TestAccNodePool_kubernetesUpgradeOneMinorAtATime(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := func(version string) string {
		return emu.Config() + poolNetworkConfig("") + upgradeWorkers("size = 1", version)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: config("1.28")},
			{Config: config("1.30"), ExpectError: regexp.MustCompile(`(?s)Kubernetes upgrade not possible.*kubernetes\s+version\s+"1\.30"\s+skips\s+1\.29\s+from\s+the\s+nodes'\s+1\.28.*version-skew-policy.*apply\s+each\s+minor\s+in\s+turn:\s+1\.29,\s+then\s+1\.30`)},
			{Config: config("1.27"), ExpectError: regexp.MustCompile(`(?s)kubeadm\s+does\s+not\s+downgrade`)},
			{Config: config("1.29"), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
}

// An autoscaling worker pool whose Kubernetes minor rises is planned with a warning naming the
// attribute, the skew policy and the order to apply in (its scaling group launches kubelets of
// the new minor from this apply on; the scenario modules' autoscaling pools come before the
// control plane); a patch release is planned without one. OpenTofu's own output is read.
func TestAccNodePoolAutoscaling_minorUpgradeWarns(t *testing.T) {
	acctest.PreCheck(t)
	run := acctest.NewCLIRun(t)
	emu := acctest.StartEmulator(t)
	config := func(version string) string {
		return crashProviders + emu.Config() + poolNetworkConfig("") + upgradeWorkers("autoscaling = { min_size = 1, max_size = 2 }", version)
	}
	run.Write(config("1.36.3"))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	run.Write(config("1.37.2"))
	plan := run.MustRun("plan", "-no-color", "-input=false")
	for _, want := range []string{"Apply the control plane first", "rises from 1.36.3 to 1.37.2", "version-skew-policy", "-target"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan of a minor upgrade of an autoscaling pool does not say %q:\n%s", want, plan)
		}
	}
	run.Write(config("1.36.4"))
	if plan := run.MustRun("plan", "-no-color", "-input=false"); strings.Contains(plan, "Apply the control plane first") {
		t.Errorf("a patch release was warned about:\n%s", plan)
	}
	run.MustRun("destroy", "-auto-approve", "-no-color", "-input=false")
	if err := checkNothingLeft(emu)(nil); err != nil {
		t.Fatal(err)
	}
}

// upgradeWorkers is a one-T4 worker pool joining a control plane at a fixed endpoint, sized by
// sizing (size = N, or an autoscaling block), installing Kubernetes version.
func upgradeWorkers(sizing, version string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "workers" {
  name          = "workers"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  %s
  kubernetes = {
    api_endpoint = "10.0.0.10:6443"
    join_token   = %q
    ca_cert_hash = "sha256:%s"
    versions     = { kubernetes = %q }
  }
}
`, sizing, testJoinToken, strings.Repeat("ab", 32), version)
}
