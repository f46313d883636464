package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// buildEmulator compiles the program once per test into a temporary directory.
func buildEmulator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gpucluster-emulator")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("building the emulator: %v\n%s", err, out)
	}
	return bin
}

// startProgram runs the built emulator on a free port with args and returns its base URL once it
// printed the ready line, and the program, which is killed when the test ends.
func startProgram(t *testing.T, bin string, args ...string) (string, *testtools.Program) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--boot-seconds", "0.1"}, args...)...)
	program, line := testtools.StartProgram(t, cmd, 30*time.Second)
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("ready line = %q, want `listening on http://127.0.0.1:PORT`", line)
	}
	return m[1], program
}

// TestProgramServesUntilInterrupted runs the program as a user does: port 0, the one ready line,
// a real call to the admin API, then SIGINT, a clean exit and the state saved.
func TestProgramServesUntilInterrupted(t *testing.T) {
	bin := buildEmulator(t)
	state := filepath.Join(t.TempDir(), "state.json")
	url, program := startProgram(t, bin, "--state-file", state)

	resp, err := http.Get(url + "/_emulator/resources")
	if err != nil {
		t.Fatalf("the emulator does not answer at %s: %v", url, err)
	}
	var resources map[string][]any
	if err := json.NewDecoder(resp.Body).Decode(&resources); err != nil {
		t.Fatalf("decoding /_emulator/resources: %v", err)
	}
	resp.Body.Close()
	for _, key := range []string{"instances", "vpcs", "vswitches", "security_groups", "deployment_sets", "hpc_clusters", "file_systems", "buckets"} {
		if list, ok := resources[key]; !ok || list == nil {
			t.Errorf("/_emulator/resources lacks the list %q", key)
		}
	}

	program.Stop(t, syscall.SIGINT, 30*time.Second)
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("no state file after a clean stop: %v", err)
	}
}

func TestHelpExplainsEveryFlag(t *testing.T) {
	bin := buildEmulator(t)
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	for _, flag := range []string{"listen", "state-file", "access-key", "secret-key", "boot-seconds", "consistency-delay-ms", "gpu-quota", "region"} {
		if !strings.Contains(string(out), "-"+flag) {
			t.Errorf("--help does not explain --%s:\n%s", flag, out)
		}
	}
}
