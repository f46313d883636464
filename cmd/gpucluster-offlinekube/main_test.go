package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// The program, built once for all the tests of the package (a build is seconds of the 2 cores).
var (
	programDir   string
	programOnce  sync.Once
	program      string
	programError error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if programDir != "" {
		_ = os.RemoveAll(programDir)
	}
	os.Exit(code)
}

func buildProgram(t *testing.T) string {
	t.Helper()
	programOnce.Do(func() {
		if programDir, programError = os.MkdirTemp("", "gpucluster-offlinekube-"); programError != nil {
			return
		}
		program = filepath.Join(programDir, "gpucluster-offlinekube")
		if out, err := exec.Command("go", "build", "-o", program, ".").CombinedOutput(); err != nil {
			programError = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if programError != nil {
		t.Fatalf("building gpucluster-offlinekube: %v", programError)
	}
	return program
}

// TestProgramRunsTheClusterUntilTerminated runs the program as a script does: the one ready line,
// the kubeconfig it names used by a client, then SIGTERM, a clean exit and no component left.
func TestProgramRunsTheClusterUntilTerminated(t *testing.T) {
	kubeBin, err := offlinekube.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := offlinekube.CheckBinaries(kubeBin); err != nil {
		t.Fatal(err)
	}
	workDir := t.TempDir()
	cmd := exec.Command(buildProgram(t), "-bin", kubeBin, "-work-dir", workDir)
	running, line := testtools.StartProgram(t, cmd, offlinekube.DefaultStartTimeout+10*time.Second)
	m := regexp.MustCompile(`^kubeconfig (/.+)$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("ready line = %q, want `kubeconfig PATH`; standard error:\n%s", line, running.Stderr())
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

	running.Stop(t, syscall.SIGTERM, time.Minute)
	if left := offlinekube.ProcessesMentioning(workDir); len(left) > 0 {
		t.Fatalf("components left running after the program exited: %v", left)
	}
	if _, err := os.Stat(filepath.Join(workDir, "logs", "kube-apiserver.log")); err != nil {
		t.Errorf("-work-dir is kept, with the logs: %v", err)
	}
}

func TestProgramNamesMissingBinaries(t *testing.T) {
	out, err := exec.Command(buildProgram(t), "-bin", t.TempDir()).CombinedOutput()
	if err == nil {
		t.Fatalf("exit 0 without binaries; output:\n%s", out)
	}
	for _, want := range []string{"kube-apiserver", "make kube"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not mention %q:\n%s", want, out)
		}
	}
}
