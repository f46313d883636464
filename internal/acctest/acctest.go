// Package acctest holds what acceptance tests share: provider factories, a real OpenTofu binary,
// an emulator per test, and provider blocks pointed at it.
package acctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/provider"
)

// Credentials and region the emulator accepts when started without others: emulator.New and
// cmd/gpucluster-emulator default to this key pair, and cn-wulanchabu is one of its regions.
const (
	AccessKey = "emulator"
	SecretKey = "emulator-secret"
	Region    = "cn-wulanchabu"
)

// ProviderName is the provider's local name in test configurations.
const ProviderName = "gpucluster"

// ProtoV6ProviderFactories serves the provider in-process; OpenTofu reaches it through
// TF_REATTACH_PROVIDERS, which the testing framework sets up.
func ProtoV6ProviderFactories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		ProviderName: providerserver.NewProtocol6WithError(provider.New("test")()),
	}
}

// repoRoot finds the module root from this file's location, so tests work from any package.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// PreCheck makes sure a real CLI is there to drive. Order: TF_ACC_TERRAFORM_PATH, then tofu or
// terraform on PATH, then ./bin/tofu as `make tofu` builds it. Missing all three fails the test
// with the command that fixes it: a silently skipped acceptance test would hide a broken provider.
func PreCheck(t *testing.T) {
	t.Helper()
	// OpenTofu resolves an unqualified provider to registry.opentofu.org; the framework reattaches
	// the in-process provider under this host, so the two must agree.
	if os.Getenv("TF_ACC_PROVIDER_HOST") == "" {
		t.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	}
	// Some machines export TF_CLI_CONFIG_FILE naming a file that does not exist; OpenTofu then
	// prints a warning before its version, which the testing framework cannot parse.
	if p := os.Getenv("TF_CLI_CONFIG_FILE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Setenv("TF_CLI_CONFIG_FILE", "")
		}
	}
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("TF_ACC_TERRAFORM_PATH=%s: %v", p, err)
		}
		return
	}
	for _, name := range []string{"tofu", "terraform"} {
		if p, err := exec.LookPath(name); err == nil {
			t.Setenv("TF_ACC_TERRAFORM_PATH", p)
			return
		}
	}
	local := filepath.Join(repoRoot(), "bin", "tofu")
	if _, err := os.Stat(local); err == nil {
		t.Setenv("TF_ACC_TERRAFORM_PATH", local)
		return
	}
	t.Fatalf("acceptance tests need OpenTofu: run `make tofu` (builds ./bin/tofu from the Go module proxy), or set TF_ACC_TERRAFORM_PATH")
}

// ProviderBlock returns a provider block for the given endpoint and credentials, plus extra
// attribute lines (such as "max_retries = 1").
func ProviderBlock(endpoint, accessKey, secretKey string, extra ...string) string {
	s := fmt.Sprintf("provider %q {\n  region     = %q\n  endpoint   = %q\n  access_key = %q\n  secret_key = %q\n",
		ProviderName, Region, endpoint, accessKey, secretKey)
	for _, line := range extra {
		s += "  " + line + "\n"
	}
	return s + "}\n"
}
