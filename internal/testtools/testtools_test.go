package testtools

import (
	"fmt"
	"strings"
	"testing"
)

// recorder stands in for *testing.T so the failing and skipping paths can be observed.
type recorder struct {
	failed, skipped string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}

const absent = "gpucluster-no-such-tool"

func TestRequireFailsWhenMissing(t *testing.T) {
	t.Setenv(AllowMissingEnv, "")
	var r recorder
	if p := Require(&r, absent, "no-such-package"); p != "" {
		t.Fatalf("path %q for a missing tool", p)
	}
	if r.skipped != "" {
		t.Fatalf("skipped (%q); a missing tool must fail", r.skipped)
	}
	for _, want := range []string{absent, `"no-such-package"`, "make test-tools", AllowMissingEnv} {
		if !strings.Contains(r.failed, want) {
			t.Errorf("failure %q does not mention %s", r.failed, want)
		}
	}
}

func TestRequireSkipsWhenAllowed(t *testing.T) {
	t.Setenv(AllowMissingEnv, "1")
	var r recorder
	Require(&r, absent, "no-such-package")
	if r.failed != "" {
		t.Fatalf("failed (%q) although %s is set", r.failed, AllowMissingEnv)
	}
	if !strings.Contains(r.skipped, "make test-tools") || !strings.Contains(r.skipped, AllowMissingEnv) {
		t.Fatalf("skip reason %q should name the fix and the opt-out", r.skipped)
	}
}

func TestRequireFindsPresentTools(t *testing.T) {
	var r recorder
	if p := Require(&r, "sh", "dash"); p == "" || r.failed != "" || r.skipped != "" {
		t.Fatalf("sh: path %q, failed %q, skipped %q", p, r.failed, r.skipped)
	}
	if p := Require(&r, "/bin/sh", "dash"); p != "/bin/sh" {
		t.Fatalf("/bin/sh: path %q", p)
	}
	Require(&r, "/no/such/"+absent, "no-such-package")
	if r.failed == "" {
		t.Fatal("a missing absolute path did not fail")
	}
}
