package provider_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// tofuRun drives the real OpenTofu binary in a working directory against a provider binary built
// from this module, the way a user runs it: the testing framework serves the provider in-process
// and cannot kill its CLI mid-apply, which is what the crash test needs.
type tofuRun struct {
	t    *testing.T
	tofu string
	dir  string
	env  []string
}

func newTofuRun(t *testing.T) *tofuRun {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	acctest.PreCheck(t)
	tofu := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tofu == "" {
		t.Fatal("PreCheck found no OpenTofu binary")
	}
	bin := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "terraform-provider-gpucluster"), ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	dir := t.TempDir()
	rc := filepath.Join(dir, "tofurc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "gpucluster/gpucluster" = %q
  }
  direct {}
}
`, bin)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "HOME=" + dir}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	return &tofuRun{t: t, tofu: tofu, dir: dir, env: env}
}

func (r *tofuRun) write(config string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, "main.tf"), []byte(config), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// command is tofu with args (flags included) in the working directory, in a process group of its own so the
// provider plugin it starts can be killed with it.
func (r *tofuRun) command(args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(r.tofu, args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// run runs tofu to completion and returns its exit code and output.
func (r *tofuRun) run(args ...string) (int, string) {
	r.t.Helper()
	cmd, out := r.command(args...)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	default:
		r.t.Fatalf("running tofu %s: %v", strings.Join(args, " "), err)
		return -1, ""
	}
}

func (r *tofuRun) mustRun(args ...string) string {
	r.t.Helper()
	code, out := r.run(args...)
	if code != 0 {
		r.t.Fatalf("tofu %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// applyKilledWhen starts `tofu apply` and kills it with its provider (SIGKILL to the process
// group) as soon as ready reports true; the test fails if the apply ends first or ready stays
// false for 2 minutes.
func (r *tofuRun) applyKilledWhen(ready func() bool, what string) {
	r.t.Helper()
	cmd, out := r.command("apply", "-auto-approve", "-no-color", "-input=false")
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	r.t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	deadline := time.After(2 * time.Minute)
	for !ready() {
		select {
		case err := <-exited:
			r.t.Fatalf("tofu apply ended (%v) before %s; the crash test needs it in flight:\n%s", err, what, out)
		case <-deadline:
			r.t.Fatalf("not within 2 minutes: %s\n%s", what, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		r.t.Fatalf("killing tofu and its provider: %v", err)
	}
	r.t.Logf("tofu after SIGKILL: %v", <-exited)
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
	run := newTofuRun(t)
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
	run.write(network)
	run.mustRun("apply", "-auto-approve", "-no-color", "-input=false")

	run.write(network + pool)
	run.applyKilledWhen(func() bool { return poolInstances(emu, "big") > 0 }, "a node was created")
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
	applied := run.mustRun("apply", "-auto-approve", "-no-color", "-input=false")
	if got := poolInstances(emu, "big"); got != 200 {
		t.Fatalf("after the second apply the emulator holds %d nodes of the pool, want exactly 200\n%s", got, applied)
	}
	if got := len(emu.Resources().Instances); got != 200 {
		t.Fatalf("the emulator holds %d instances, want 200", got)
	}
	// The state knows all of them: nothing left to do.
	if code, plan := run.run("plan", "-detailed-exitcode", "-no-color", "-input=false"); code != 0 {
		t.Fatalf("plan after the second apply is not empty (exit %d):\n%s", code, plan)
	}
	state := run.mustRun("state", "show", "-no-color", "gpucluster_node_pool.big")
	if n := len(regexp.MustCompile(`(?m)^\s+id\s+= "i-`).FindAllString(state, -1)); n != 200 {
		t.Fatalf("the state lists %d nodes, want 200", n)
	}

	run.mustRun("destroy", "-auto-approve", "-no-color", "-input=false")
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
