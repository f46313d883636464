package provider_test

import (
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// applyKilledWhen starts `tofu apply` and kills it with its provider (SIGKILL to the process
// group) as soon as ready reports true; the test fails if the apply ends first or ready stays
// false for 2 minutes.
func applyKilledWhen(r *acctest.CLIRun, ready func() bool, what string) {
	r.T.Helper()
	cmd, out := r.Command("apply", "-auto-approve", "-no-color", "-input=false")
	if err := cmd.Start(); err != nil {
		r.T.Fatal(err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	r.T.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	deadline := time.After(2 * time.Minute)
	for !ready() {
		select {
		case err := <-exited:
			r.T.Fatalf("tofu apply ended (%v) before %s; the crash test needs it in flight:\n%s", err, what, out)
		case <-deadline:
			r.T.Fatalf("not within 2 minutes: %s\n%s", what, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		r.T.Fatalf("killing tofu and its provider: %v", err)
	}
	r.T.Logf("tofu after SIGKILL: %v", <-exited)
}

// poolInstances counts the emulator's instances tagged as nodes of the pool named name.
func poolInstances(emu *acctest.Emulator, name string) int {
	n := 0
	for _, in := range emu.Resources().Instances {
		if tags, ok := in["tags"].(map[string]string); ok && tags["gpucluster:pool-name"] == name {
			n++
		}
	}
	return n
}

const crashProviders = `
terraform {
  required_providers {
    gpucluster = { source = "gpucluster/gpucluster" }
  }
}
`

// Must show: OpenTofu killed (SIGKILL, with its provider) while a 200-node create is in flight;
// the next apply adopts what the killed one created and the pool has exactly 200 nodes.
func TestAccNodePool_crashMidCreate(t *testing.T) {
	run := acctest.NewCLIRun(t)
	// Three seconds of boot keep the create in flight (waiting for Running) long enough to kill.
	emu := acctest.StartEmulator(t, acctest.WithBootTime(3*time.Second))
	network := crashProviders + emu.Config() + poolNetworkConfig("")
	pool := `
resource "gpucluster_node_pool" "big" {
  name          = "big"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  size          = 200
}
`
	run.Write(network)
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")

	run.Write(network + pool)
	applyKilledWhen(run, func() bool { return poolInstances(emu, "big") > 0 }, "a node was created")
	atKill, running := poolInstances(emu, "big"), 0
	for _, in := range emu.Resources().Instances {
		if in["status"] == "Running" {
			running++
		}
	}
	t.Logf("killed tofu with %d nodes created (%d running), RunInstances calls %d", atKill, running, emu.Stats().Calls["RunInstances"])
	if running == atKill {
		t.Fatalf("every node was already running when tofu was killed: the create was not in flight")
	}

	// Again, to completion: the nodes of the killed apply are adopted, the rest created.
	applied := run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	if got := poolInstances(emu, "big"); got != 200 {
		t.Fatalf("after the second apply the emulator holds %d nodes of the pool, want exactly 200\n%s", got, applied)
	}
	if got := len(emu.Resources().Instances); got != 200 {
		t.Fatalf("the emulator holds %d instances, want 200", got)
	}
	// The state knows all of them: nothing left to do.
	if code, plan := run.Run("plan", "-detailed-exitcode", "-no-color", "-input=false"); code != 0 {
		t.Fatalf("plan after the second apply is not empty (exit %d):\n%s", code, plan)
	}
	state := run.MustRun("state", "show", "-no-color", "gpucluster_node_pool.big")
	if n := len(regexp.MustCompile(`(?m)^\s+id\s+= "i-`).FindAllString(state, -1)); n != 200 {
		t.Fatalf("the state lists %d nodes, want 200", n)
	}

	run.MustRun("destroy", "-auto-approve", "-no-color", "-input=false")
	if err := checkNothingLeft(emu)(nil); err != nil {
		t.Fatal(err)
	}
}

// Must show: a 200-node pool applies, plans clean and destroys through 20% throttling, 5%
// ServiceUnavailable and 2% dropped connections, with nothing leaked. The faults are on for the
// whole run, network included, from the first call of the first plan to the last of the destroy.
func TestAccNodePool_faults(t *testing.T) {
	emu := acctest.StartEmulator(t, acctest.WithBootTime(500*time.Millisecond))
	emu.SetFaults(emulator.Faults{ThrottleRate: 0.20, UnavailableRate: 0.05, ResetRate: 0.02})
	config := emu.Config() + poolNetworkConfig("") + poolConfig(200, "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy: func(s *terraform.State) error {
			st := emu.Stats()
			t.Logf("calls %d, injected: Throttling.User %d, ServiceUnavailable %d, ConnectionReset %d; RunInstances %d, DeleteInstances %d",
				st.Total, st.Errors["Throttling.User"], st.Errors["ServiceUnavailable"], st.Errors["ConnectionReset"],
				st.Calls["RunInstances"], st.Calls["DeleteInstances"])
			if st.Errors["Throttling.User"] == 0 || st.Errors["ServiceUnavailable"] == 0 || st.Errors["ConnectionReset"] == 0 {
				return fmt.Errorf("the faults were not all injected (%v): the test proves nothing", st.Errors)
			}
			return checkNothingLeft(emu)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 200),
					resource.TestCheckResourceAttr("gpucluster_node_pool.train", "nodes.#", "200"),
					checkStateHoldsLiveInstances(emu, "gpucluster_node_pool.train"),
				),
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}
