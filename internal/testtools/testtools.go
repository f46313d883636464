// Package testtools finds the command-line tools some unit tests hand their rendered artefacts to
// (promtool, amtool, cloud-init, python3, openssl). `make test-tools` (scripts/install-test-tools.sh)
// installs them and `make test` runs it first, so a missing tool is a broken set-up: the test
// fails and says how to fix it, instead of skipping and letting an unchecked artefact pass.
package testtools

import (
	"fmt"
	"os"
	"os/exec"
)

// AllowMissingEnv names the opt-out: when it is set to any value, a test whose tool is missing is
// skipped (with the same message) instead of failing. For machines where the Debian packages
// cannot be installed; CI never sets it.
const AllowMissingEnv = "GPUCLUSTER_ALLOW_MISSING_TOOLS"

// T is the part of testing.TB this package uses.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Require returns the path of tool (a name looked up on PATH, or an absolute path) and stops the
// test when it is missing: a failure, or a skip when AllowMissingEnv is set. debianPackage is the
// package that provides it.
func Require(t T, tool, debianPackage string) string {
	t.Helper()
	p, err := find(tool)
	if err == nil {
		return p
	}
	msg := Missing(tool, debianPackage)
	if os.Getenv(AllowMissingEnv) != "" {
		t.Skipf("%s; skipped because %s is set", msg, AllowMissingEnv)
	} else {
		t.Fatalf("%s; to skip this check instead, set %s=1", msg, AllowMissingEnv)
	}
	return ""
}

// Missing is the message for a missing tool: which tool, which package, and the command that
// installs it.
func Missing(tool, debianPackage string) string {
	return fmt.Sprintf("%s not found: run `make test-tools` (installs the Debian package %q)", tool, debianPackage)
}

func find(tool string) (string, error) {
	if len(tool) > 0 && tool[0] == '/' {
		if _, err := os.Stat(tool); err != nil {
			return "", err
		}
		return tool, nil
	}
	return exec.LookPath(tool)
}
