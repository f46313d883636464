package offlinekube

import (
	"context"
	"os"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// TB is the part of testing.TB that StartT uses.
type TB interface {
	Helper()
	Context() context.Context
	Cleanup(func())
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Failed() bool
}

// StartT starts a cluster for a test and stops it when the test ends, passed or failed. Empty
// fields of opts get the test's defaults: the repository's ./bin, a new temporary work directory,
// t.Logf. Missing binaries fail the test with the command that builds them (`make kube`,
// which `make test` runs first); like the other test tools (internal/testtools), they skip it
// instead only when testtools.AllowMissingEnv is set. When the test fails, the components' logs
// are kept and their directory is logged.
func StartT(t TB, opts Options) *Cluster {
	t.Helper()
	if opts.BinDir == "" {
		binDir, err := DefaultBinDir()
		if err != nil {
			t.Fatalf("%v", err)
		}
		opts.BinDir = binDir
	}
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	if err := CheckBinaries(opts.BinDir); err != nil {
		if os.Getenv(testtools.AllowMissingEnv) != "" {
			t.Skipf("%v; skipped because %s is set", err, testtools.AllowMissingEnv)
		}
		t.Fatalf("%v; to skip this test instead, set %s=1", err, testtools.AllowMissingEnv)
	}
	removeWorkDir := opts.WorkDir == ""
	if removeWorkDir {
		dir, err := os.MkdirTemp("", "offlinekube-")
		if err != nil {
			t.Fatalf("offlinekube: %v", err)
		}
		opts.WorkDir = dir
	}
	c, err := Start(t.Context(), opts)
	t.Cleanup(func() {
		if c != nil {
			c.Stop()
		}
		if t.Failed() {
			t.Logf("offlinekube: the components' logs are kept in %s", opts.WorkDir)
			return
		}
		if removeWorkDir {
			_ = os.RemoveAll(opts.WorkDir)
		}
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return c
}
