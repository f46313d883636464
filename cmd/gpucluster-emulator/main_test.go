package main_test

import (
	"bufio"
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
// printed the ready line, and the process, which is killed when the test ends.
func startProgram(t *testing.T, bin string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--boot-seconds", "0.1"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)$`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("ready line = %q", line)
		}
		return m[1], cmd
	case <-time.After(30 * time.Second):
		t.Fatal("the emulator printed no ready line within 30 s")
	}
	return "", nil
}

// TestProgramServesUntilInterrupted runs the program as a user does: port 0, the one ready line,
// a real call to the admin API, then SIGINT, a clean exit and the state saved.
func TestProgramServesUntilInterrupted(t *testing.T) {
	bin := buildEmulator(t)
	state := filepath.Join(t.TempDir(), "state.json")
	url, cmd := startProgram(t, bin, "--state-file", state)

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

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the emulator did not exit cleanly on SIGINT: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the emulator kept running 30 s after SIGINT")
	}
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
