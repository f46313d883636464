package main_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
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
	for _, flag := range []string{"listen", "state-file", "access-key", "secret-key", "boot-seconds", "consistency-delay-ms", "gpu-quota", "region", "intercept-ca-file"} {
		if !strings.Contains(string(out), "-"+flag) {
			t.Errorf("--help does not explain --%s:\n%s", flag, out)
		}
	}
}

// With --intercept-ca-file the program writes its CA and answers HTTPS to an Alibaba Cloud host
// name sent through it as a proxy, as the Cluster Autoscaler's calls to location.aliyuncs.com are:
// the Location service answers over TLS, the certificate verified against the written CA.
func TestProgramInterceptsHTTPS(t *testing.T) {
	bin := buildEmulator(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	base, _ := startProgram(t, bin, "--intercept-ca-file", caFile)
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatalf("no CA file: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("%s holds no PEM certificate", caFile)
	}
	proxy, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	// Unsigned: the emulator's RPC dispatcher answers in the vendor's error shape, which shows the
	// call reached it over TLS.
	resp, err := c.Get("https://location.aliyuncs.com/?Action=DescribeEndpoints&Version=2015-06-12&Format=JSON")
	if err != nil {
		t.Fatalf("HTTPS through the emulator: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"Code":"MissingParameter"`) {
		t.Fatalf("location.aliyuncs.com through the emulator: %d %s", resp.StatusCode, body)
	}
}
