package offlinekube

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// recorder stands in for *testing.T: Fatalf and Skipf record and end the goroutine, as they do in
// a test.
type recorder struct {
	failed, skipped string
}

func (r *recorder) Helper()                  {}
func (r *recorder) Context() context.Context { return context.Background() }
func (r *recorder) Cleanup(func())           {}
func (r *recorder) Logf(string, ...any)      {}
func (r *recorder) Failed() bool             { return r.failed != "" }
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// startTWithout runs StartT on an empty bin directory, as a test would on a machine where
// `make kube` has not run.
func startTWithout(t *testing.T) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		StartT(r, Options{BinDir: t.TempDir()})
	}()
	<-done
	return r
}

func TestStartTFailsWithoutTheBinaries(t *testing.T) {
	t.Setenv(testtools.AllowMissingEnv, "")
	r := startTWithout(t)
	if r.skipped != "" {
		t.Fatalf("skipped (%q); missing binaries must fail the test", r.skipped)
	}
	for _, want := range []string{"kube-apiserver", "make kube", testtools.AllowMissingEnv} {
		if !strings.Contains(r.failed, want) {
			t.Errorf("failure %q does not mention %s", r.failed, want)
		}
	}
}

func TestStartTSkipsWithoutTheBinariesOnlyWhenAllowed(t *testing.T) {
	t.Setenv(testtools.AllowMissingEnv, "1")
	r := startTWithout(t)
	if r.failed != "" || !strings.Contains(r.skipped, "make kube") {
		t.Fatalf("failed %q, skipped %q; want a skip naming make kube", r.failed, r.skipped)
	}
}
