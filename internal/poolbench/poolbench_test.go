// Package poolbench measures gpucluster_node_pool end to end: the real provider binary driven by
// real OpenTofu against the emulator (boot time 2 s), for pools of 10, 100 and 1,000 nodes (or the
// sizes in POOLBENCH_SIZES, such as 1000,3000,10000 for the cost curve). It prints API calls by
// action for create, a no-change plan, a rolling update (max_unavailable 100) and destroy, wall
// times, the provider's peak RSS and CPU time, the emulator's own serving time and the size of the
// pool's state. Run it with `make bench` (`make bench BENCH_SIZES=1000,3000,10000` for the
// curve); it is a benchmark, never a timed assertion.
package poolbench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

const (
	accessKey = "emulator"
	secretKey = "emulator-secret"
	region    = "cn-wulanchabu"
	bootTime  = 2 * time.Second
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// tofuPath finds the CLI as the acceptance tests do.
func tofuPath(b *testing.B) string {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	if p, err := exec.LookPath("tofu"); err == nil {
		return p
	}
	local := filepath.Join(repoRoot(), "bin", "tofu")
	if _, err := os.Stat(local); err != nil {
		b.Fatalf("the benchmark drives OpenTofu: run `make tofu` or set TF_ACC_TERRAFORM_PATH")
	}
	return local
}

// harness is one emulator, one provider build and the two stacks (network, pool) under test.
type harness struct {
	b       *testing.B
	emu     *emulator.Server
	url     string
	tofu    string
	env     []string
	netDir  string
	poolDir string
}

func newHarness(b *testing.B) *harness {
	b.Helper()
	work := b.TempDir()
	binDir := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(binDir, "terraform-provider-gpucluster"), ".")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the provider: %v\n%s", err, out)
	}
	rc := filepath.Join(work, "tofurc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "gpucluster/gpucluster" = %q
  }
  direct {}
}
`, binDir)), 0o600); err != nil {
		b.Fatal(err)
	}
	emu, err := emulator.New(emulator.Config{AccessKey: accessKey, SecretKey: secretKey, BootTime: bootTime})
	if err != nil {
		b.Fatal(err)
	}
	url, err := emu.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = emu.Close() })

	h := &harness{b: b, emu: emu, url: url, tofu: tofuPath(b),
		netDir: filepath.Join(work, "network"), poolDir: filepath.Join(work, "pool")}
	h.env = append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1",
		"GPUCLUSTER_ENDPOINT="+url, "ALIBABA_CLOUD_REGION="+region,
		"ALIBABA_CLOUD_ACCESS_KEY_ID="+accessKey, "ALIBABA_CLOUD_ACCESS_KEY_SECRET="+secretKey,
		// Generous client-side rate: the benchmark measures the provider's call pattern, not the limiter.
		"GPUCLUSTER_RATE_LIMIT=200",
	)
	provider := "terraform {\n  required_providers {\n    gpucluster = { source = \"gpucluster/gpucluster\" }\n  }\n}\nprovider \"gpucluster\" {}\n"
	h.write(h.netDir, provider+`
resource "gpucluster_rdma_network" "bench" {
  name        = "bench"
  cidr_block  = "10.40.0.0/16"
  zone_ids    = ["cn-wulanchabu-a", "cn-wulanchabu-b", "cn-wulanchabu-c"]
  admin_cidrs = ["10.99.0.0/24"]
}
output "id" { value = gpucluster_rdma_network.bench.id }
`)
	h.run(h.netDir, "apply", "-auto-approve", "-input=false", "-no-color")
	netID := strings.TrimSpace(h.run(h.netDir, "output", "-raw", "id"))
	h.write(h.poolDir, provider+`
variable "size" { type = number }
variable "user_data" {
  type    = string
  default = null
}
resource "gpucluster_node_pool" "bench" {
  name            = "bench"
  network_id      = "`+netID+`"
  scenario        = "ai_training"
  gpu_model       = "A100"
  gpus_per_node   = 8
  size            = var.size
  user_data       = var.user_data
  update_strategy = { max_unavailable = 100 }
}
`)
	return h
}

func (h *harness) write(dir, content string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(content), 0o644); err != nil {
		h.b.Fatal(err)
	}
}

func (h *harness) run(dir string, args ...string) string {
	h.b.Helper()
	cmd := exec.Command(h.tofu, args...)
	cmd.Dir = dir
	cmd.Env = h.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		h.b.Fatalf("tofu %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// phase is one measured tofu command.
type phase struct {
	name   string
	calls  map[string]int64
	total  int64
	wall   time.Duration
	peakKB int64
	// cpu is the provider processes' user+system time; serve the emulator's time answering.
	cpu, serve time.Duration
}

func (h *harness) measure(name string, args ...string) phase {
	before := h.emu.Stats()
	stop := watchProvider()
	start := time.Now()
	h.run(h.poolDir, args...)
	wall := time.Since(start)
	peak, cpu := stop()
	after := h.emu.Stats()
	p := phase{name: name, calls: map[string]int64{}, wall: wall, peakKB: peak, cpu: cpu,
		serve: time.Duration((after.ServeSeconds - before.ServeSeconds) * float64(time.Second))}
	for action, n := range after.Calls {
		if d := n - before.Calls[action]; d > 0 {
			p.calls[action] = d
			p.total += d
		}
	}
	return p
}

// watchProvider samples every provider process that runs until the returned function is
// called: the largest peak resident set (VmHWM, KiB) and the CPU time all of them used (the
// last sample of each process's utime+stime, so up to one 20 ms interval per process is missed).
func watchProvider() func() (peakKB int64, cpu time.Duration) {
	var mu sync.Mutex
	var peak int64
	ticks := map[string]int64{} // pid -> utime+stime in clock ticks
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for pid, p := range providerProcesses() {
				mu.Lock()
				peak = max(peak, p.hwmKB)
				ticks[pid] = max(ticks[pid], p.cpuTicks)
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() (int64, time.Duration) {
		close(done)
		wg.Wait()
		var sum int64
		for _, t := range ticks {
			sum += t
		}
		// Linux reports utime and stime in USER_HZ, 100 per second on every architecture Go runs on.
		return peak, time.Duration(sum) * 10 * time.Millisecond
	}
}

type providerSample struct{ hwmKB, cpuTicks int64 }

// providerProcesses reads /proc for the running provider processes.
func providerProcesses() map[string]providerSample {
	entries, _ := os.ReadDir("/proc")
	out := map[string]providerSample{}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || filepath.Base(exe) != "terraform-provider-gpucluster" {
			continue
		}
		var p providerSample
		if status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status")); err == nil {
			for _, line := range strings.Split(string(status), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
					p.hwmKB, _ = strconv.ParseInt(f[1], 10, 64)
				}
			}
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			// Fields after the command name (which may hold spaces) start at state, field 3;
			// utime and stime are fields 14 and 15.
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 12 {
					u, _ := strconv.ParseInt(f[11], 10, 64)
					st, _ := strconv.ParseInt(f[12], 10, 64)
					p.cpuTicks = u + st
				}
			}
		}
		out[e.Name()] = p
	}
	return out
}

func formatCalls(calls map[string]int64) string {
	keys := make([]string, 0, len(calls))
	for k := range calls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, calls[k]))
	}
	return strings.Join(parts, " ")
}

// benchSizes are the pool sizes to measure: POOLBENCH_SIZES (comma-separated) or 10, 100, 1,000.
func benchSizes(b *testing.B) []int {
	list := os.Getenv("POOLBENCH_SIZES")
	if list == "" {
		return []int{10, 100, 1000}
	}
	var sizes []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("POOLBENCH_SIZES=%q: %q is not a node count", list, f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func BenchmarkNodePool(b *testing.B) {
	if testing.Short() {
		b.Skip("node pool benchmark skipped in -short mode: it builds the provider and applies up to 1,000 nodes")
	}
	h := newHarness(b)
	for _, size := range benchSizes(b) {
		b.Run(fmt.Sprintf("nodes=%d", size), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sizeVar := fmt.Sprintf("-var=size=%d", size)
				create := h.measure("create", "apply", "-auto-approve", "-input=false", "-no-color", sizeVar)
				stateKB := h.stateKB()
				plan := h.measure("no-change plan", "plan", "-detailed-exitcode", "-input=false", "-no-color", sizeVar)
				// New user data rolls every node, max_unavailable (100) at a time.
				userDataVar := fmt.Sprintf("-var=user_data=#cloud-config\nbootcmd: [\"echo roll %d\"]\n", i)
				roll := h.measure("rolling update", "apply", "-auto-approve", "-input=false", "-no-color", sizeVar, userDataVar)
				// The same variables as the last apply, so destroy's refresh plans no change.
				destroy := h.measure("destroy", "destroy", "-auto-approve", "-input=false", "-no-color", sizeVar, userDataVar)
				if left := len(h.emu.Resources().Instances); left != 0 {
					b.Fatalf("%d instances left after destroy", left)
				}
				b.Logf("state of the %d-node pool: %d KB", size, stateKB)
				for _, p := range []phase{create, plan, roll, destroy} {
					b.Logf("| %6d | %-14s | %5d | %7.1fs | %6.1fs | %6.1fs | %6.1f MB | %s |", size, p.name, p.total, p.wall.Seconds(),
						p.cpu.Seconds(), p.serve.Seconds(), float64(p.peakKB)/1024, formatCalls(p.calls))
				}
				b.ReportMetric(float64(create.total), "create-calls")
				b.ReportMetric(float64(create.calls["RunInstances"]), "create-RunInstances")
				b.ReportMetric(create.wall.Seconds(), "create-s")
				b.ReportMetric(float64(plan.total), "plan-calls")
				b.ReportMetric(plan.cpu.Seconds(), "plan-provider-cpu-s")
				b.ReportMetric(float64(roll.total), "roll-calls")
				b.ReportMetric(roll.wall.Seconds(), "roll-s")
				b.ReportMetric(float64(destroy.total), "destroy-calls")
				b.ReportMetric(destroy.wall.Seconds(), "destroy-s")
				b.ReportMetric(float64(max(create.peakKB, plan.peakKB, roll.peakKB, destroy.peakKB))/1024, "provider-peak-MB")
				b.ReportMetric(float64(stateKB)/1024, "state-MB")
			}
		})
	}
}

// stateKB is the size of the pool stack's state file.
func (h *harness) stateKB() int64 {
	fi, err := os.Stat(filepath.Join(h.poolDir, "terraform.tfstate"))
	if err != nil {
		h.b.Fatalf("the pool's state: %v", err)
	}
	return fi.Size() / 1024
}
