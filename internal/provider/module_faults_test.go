package provider_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// emulatorProcess is the emulator program (cmd/gpucluster-emulator) as users run it: its own
// process, its state in a file, its admin API over HTTP.
type emulatorProcess struct {
	t         *testing.T
	bin       string
	stateFile string
	addr      string // host:port, kept across restarts
	URL       string
	cmd       *exec.Cmd
	exited    chan error
	stderr    bytes.Buffer
}

// buildEmulator builds cmd/gpucluster-emulator into a temporary directory.
func buildEmulator(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "gpucluster-emulator")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gpucluster-emulator")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the emulator: %v\n%s", err, out)
	}
	return bin
}

// startEmulatorProcess starts the program on a free port with a state file.
func startEmulatorProcess(t *testing.T, bin string) *emulatorProcess {
	t.Helper()
	p := &emulatorProcess{t: t, bin: bin, stateFile: filepath.Join(t.TempDir(), "emulator-state.json"), addr: "127.0.0.1:0"}
	p.start()
	p.addr = strings.TrimPrefix(p.URL, "http://")
	t.Cleanup(func() {
		if p.cmd != nil && p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			if err := <-p.exited; err != nil {
				t.Logf("emulator after kill: %v", err) // a killed process exits with an error
			}
		}
	})
	return p
}

// start runs the program and waits for its ready line.
func (p *emulatorProcess) start() {
	p.t.Helper()
	cmd := exec.Command(p.bin, "--listen", p.addr, "--state-file", p.stateFile, "--boot-seconds", "1",
		"--access-key", acctest.AccessKey, "--secret-key", acctest.SecretKey)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	p.stderr.Reset()
	cmd.Stderr = &p.stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("starting the emulator: %v", err)
	}
	p.cmd, p.exited = cmd, make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				ready <- url
			}
		}
	}()
	go func() { p.exited <- cmd.Wait() }()
	select {
	case p.URL = <-ready:
	case err := <-p.exited:
		p.t.Fatalf("the emulator exited before it was ready (%v): %s", err, p.stderr.String())
	case <-time.After(30 * time.Second):
		p.t.Fatalf("the emulator printed no ready line within 30s: %s", p.stderr.String())
	}
}

// restart stops the program the way a service manager does (SIGTERM: it saves its state), leaves
// it down for downtime, and starts it again on the same address with the same state file.
func (p *emulatorProcess) restart(downtime time.Duration) time.Duration {
	p.t.Helper()
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("stopping the emulator: %v", err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			p.t.Fatalf("the emulator did not stop cleanly: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(30 * time.Second):
		p.t.Fatal("the emulator did not stop within 30s of SIGTERM")
	}
	time.Sleep(downtime)
	p.start()
	return time.Since(began)
}

func (p *emulatorProcess) admin(method, path string, body any, out any) {
	p.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, p.URL+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		p.t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			p.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

func (p *emulatorProcess) resources() emulator.Resources {
	var r emulator.Resources
	p.admin(http.MethodGet, "/_emulator/resources", nil, &r)
	return r
}

func (p *emulatorProcess) stats() emulator.Stats {
	var s emulator.Stats
	p.admin(http.MethodGet, "/_emulator/stats", nil, &s)
	return s
}

func (p *emulatorProcess) setFaults(f emulator.Faults) {
	p.admin(http.MethodPut, "/_emulator/faults", f, nil)
}

// live counts what lives in the emulator, by kind.
func live(r emulator.Resources) map[string]int {
	return map[string]int{
		"instances": len(r.Instances), "vpcs": len(r.Vpcs), "vswitches": len(r.VSwitches),
		"security_groups": len(r.SecurityGroups), "deployment_sets": len(r.DeploymentSets),
		"hpc_clusters": len(r.HpcClusters), "file_systems": len(r.FileSystems), "buckets": len(r.Buckets),
		"nat_gateways": len(r.NatGateways), "snat_entries": len(r.SnatEntries), "eips": len(r.EIPs),
	}
}

func assertNothingLives(t *testing.T, p *emulatorProcess) {
	t.Helper()
	for kind, n := range live(p.resources()) {
		if n != 0 {
			t.Errorf("%d %s left in the emulator", n, kind)
		}
	}
}

// aiTrainingRoot is a root module calling modules/ai-training with its defaults: a control plane
// and two 8-GPU workers, an eRDMA network in low-latency placement, a CPFS hot tier with PL3
// disks, a cold bucket with an Alluxio cache, manifests and alert rules.
func aiTrainingRoot(name string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    gpucluster = { source = "gpucluster/gpucluster" }
  }
}

provider "gpucluster" {}

module "ai" {
  source          = "%s/ai-training"
  name            = %q
  join_token_salt = "module-faults-test"
  # The bootstrap bundle (the default) needs the nodes' RAM roles, which the module cannot create.
  control_plane    = { ram_role_name = "%s-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "%s-worker" }
  # No Kubernetes API answers here, so no control-plane node could run the acceptance gate's
  # checks: internal/clustertest runs the gate against the offline cluster.
  acceptance = { enabled = false }
  cold_storage = {
    bucket_name   = "%s-cold-0001"
    force_destroy = true
  }
}

output "nodes" {
  value = [for n in module.ai.nodes : n.status]
}
`, acctest.ModulesDir(), name, name, name, name)
}

// moduleRun is a CLI run in a fresh directory pointed at the emulator program through the
// environment, as a user with GPUCLUSTER_ENDPOINT set runs it.
func moduleRun(t *testing.T, emu *emulatorProcess, name string) *acctest.CLIRun {
	t.Helper()
	run := acctest.NewCLIRun(t)
	run.UseEmulator(emu.URL)
	run.Write(aiTrainingRoot(name))
	// get, not init: with dev_overrides init would ask the registry for the provider.
	run.MustRun("get", "-no-color")
	return run
}

const moduleNodes = 3 // the default control plane node and two GPU workers

// Must show: the ai-training module applied with 20% throttling, 5% ServiceUnavailable, 2%
// dropped connections and 200 ms latency on every call converges in one apply, plans clean,
// destroys, and leaks nothing. The faults stay on from the first call to the last.
func TestAccModuleAITraining_faults(t *testing.T) {
	emu := startEmulatorProcess(t, buildEmulator(t))
	run := moduleRun(t, emu, "ft-faults")
	emu.setFaults(emulator.Faults{ThrottleRate: 0.20, UnavailableRate: 0.05, ResetRate: 0.02, LatencyMS: 200})

	start := time.Now()
	out := run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	t.Logf("apply under faults took %s", time.Since(start).Round(time.Second))
	if got := len(emu.resources().Instances); got != moduleNodes {
		t.Fatalf("the emulator holds %d instances after the apply, want %d\n%s", got, moduleNodes, out)
	}
	if !strings.Contains(out, `"Running"`) {
		t.Fatalf("the apply's outputs show no running node:\n%s", out)
	}

	start = time.Now()
	if code, plan := run.Run("plan", "-detailed-exitcode", "-no-color", "-input=false"); code != 0 {
		t.Fatalf("plan after the apply is not clean (exit %d):\n%s", code, plan)
	}
	t.Logf("clean plan under faults took %s", time.Since(start).Round(time.Second))

	start = time.Now()
	run.MustRun("destroy", "-auto-approve", "-no-color", "-input=false")
	t.Logf("destroy under faults took %s", time.Since(start).Round(time.Second))

	st := emu.stats()
	t.Logf("calls %d; injected Throttling.User %d, ServiceUnavailable %d, ConnectionReset %d",
		st.Total, st.Errors["Throttling.User"], st.Errors["ServiceUnavailable"], st.Errors["ConnectionReset"])
	if st.Errors["Throttling.User"] == 0 || st.Errors["ServiceUnavailable"] == 0 || st.Errors["ConnectionReset"] == 0 {
		t.Errorf("the faults were not all injected (%v): the test proves nothing", st.Errors)
	}
	// The network's egress went through the same faults: built on apply, removed on destroy.
	for _, action := range []string{"CreateNatGateway", "AllocateEipAddress", "AssociateEipAddress", "CreateSnatEntry",
		"DeleteSnatEntry", "ReleaseEipAddress", "DeleteNatGateway"} {
		if st.Calls[action] == 0 {
			t.Errorf("no %s call: the module's network built or removed no egress (calls %v)", action, st.Calls)
		}
	}
	emu.setFaults(emulator.Faults{})
	assertNothingLives(t, emu)
}

// Must show: the emulator program restarted (SIGTERM, then started again on the same port with
// the same state file) while an apply of the ai-training module is creating nodes; the next
// apply converges to exactly the module's nodes, plans clean, and destroys with nothing left.
func TestAccModuleAITraining_emulatorRestartMidApply(t *testing.T) {
	emu := startEmulatorProcess(t, buildEmulator(t))
	run := moduleRun(t, emu, "ft-restart")

	cmd, out := run.Command("apply", "-auto-approve", "-no-color", "-input=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	// Mid-apply: the network and storage exist and the first nodes are being created.
	deadline := time.After(5 * time.Minute)
	for len(emu.resources().Instances) == 0 {
		select {
		case err := <-exited:
			t.Fatalf("the apply ended (%v) before any node was created; the restart would not be mid-apply:\n%s", err, out)
		case <-deadline:
			t.Fatalf("no node was created within 5 minutes:\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	before := live(emu.resources())
	// Down for a few seconds, as a restarting service is: calls in flight get refused
	// connections, longer than one retry's backoff.
	down := emu.restart(3 * time.Second)
	after := live(emu.resources())
	t.Logf("restarted the emulator in %s with %v live; after the restart %v", down.Round(time.Millisecond), before, after)
	for kind, n := range before {
		if after[kind] < n {
			t.Fatalf("the restarted emulator lost %s (%d before, %d after): its state file did not hold them", kind, n, after[kind])
		}
	}

	select {
	case err := <-exited:
		t.Logf("the interrupted apply ended: %v", err)
	case <-time.After(10 * time.Minute):
		t.Fatalf("the interrupted apply did not end within 10 minutes:\n%s", out)
	}

	applied := run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	if got := len(emu.resources().Instances); got != moduleNodes {
		t.Fatalf("after the next apply the emulator holds %d instances, want exactly %d\n%s", got, moduleNodes, applied)
	}
	if code, plan := run.Run("plan", "-detailed-exitcode", "-no-color", "-input=false"); code != 0 {
		t.Fatalf("plan after the converging apply is not clean (exit %d):\n%s", code, plan)
	}
	run.MustRun("destroy", "-auto-approve", "-no-color", "-input=false")
	assertNothingLives(t, emu)
}
