package main_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/testcluster"
)

func buildProgram(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gpucluster-testcluster")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("building gpucluster-testcluster: %v\n%s", err, out)
	}
	return bin
}

// TestProgramRunsTheClusterUntilTerminated runs the program as a script does: the one ready line,
// the kubeconfig it names used by a client, then SIGTERM, a clean exit and no component left.
func TestProgramRunsTheClusterUntilTerminated(t *testing.T) {
	kubeBin, err := testcluster.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := testcluster.CheckBinaries(kubeBin); err != nil {
		t.Fatal(err)
	}
	program := buildProgram(t)
	workDir := t.TempDir()
	var stderr bytes.Buffer
	cmd := exec.Command(program, "-bin", kubeBin, "-work-dir", workDir)
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(testcluster.DefaultStartTimeout + 10*time.Second):
		t.Fatalf("no ready line; standard error:\n%s", stderr.String())
	}
	m := regexp.MustCompile(`^kubeconfig (/.+)$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("ready line = %q, want `kubeconfig PATH`; standard error:\n%s", line, stderr.String())
	}
	config, err := clientcmd.BuildConfigFromFlags("", m[1])
	if err != nil {
		t.Fatalf("the kubeconfig %s: %v", m[1], err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ServiceAccounts("default").Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the cluster named by the ready line is not ready: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("did not exit cleanly on SIGTERM: %v; standard error:\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("still running a minute after SIGTERM")
	}
	if left := testcluster.ProcessesMentioning(workDir); len(left) > 0 {
		t.Fatalf("components left running after the program exited: %v", left)
	}
	if _, err := os.Stat(filepath.Join(workDir, "logs", "kube-apiserver.log")); err != nil {
		t.Errorf("-work-dir is kept, with the logs: %v", err)
	}
}

func TestProgramNamesMissingBinaries(t *testing.T) {
	program := buildProgram(t)
	out, err := exec.Command(program, "-bin", t.TempDir()).CombinedOutput()
	if err == nil {
		t.Fatalf("exit 0 without binaries; output:\n%s", out)
	}
	for _, want := range []string{"kube-apiserver", "make kube"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not mention %q:\n%s", want, out)
		}
	}
}
