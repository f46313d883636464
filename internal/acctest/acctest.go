// Package acctest holds what acceptance tests share: provider factories, a real CLI (OpenTofu or
// HashiCorp Terraform), an emulator per test, and provider blocks pointed at it.
package acctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
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

// ModulesDir is the absolute path of modules/ with a trailing slash, so that "<ModulesDir>/name"
// is go-getter's package//subdir form: the CLI copies all of modules/ and a module's
// "../storage-tiers" calls stay inside the copy.
func ModulesDir() string { return filepath.Join(repoRoot(), "modules") + "/" }

// PreCheck makes sure a real CLI is there to drive. Order: TF_ACC_TERRAFORM_PATH; else, with
// CLI=tofu or CLI=terraform (as `make testacc CLI=...` exports it), ./bin/<cli> as `make tofu` or
// `make terraform` builds it, then <cli> on PATH; else tofu or terraform on PATH, then ./bin/tofu.
// Missing all of them fails the test with the command that fixes it: a silently skipped acceptance
// test would hide a broken provider.
func PreCheck(t *testing.T) {
	t.Helper()
	// Some machines export TF_CLI_CONFIG_FILE naming a file that does not exist; OpenTofu then
	// prints a warning before its version, which the testing framework cannot parse.
	if p := os.Getenv("TF_CLI_CONFIG_FILE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Setenv("TF_CLI_CONFIG_FILE", "")
		}
	}
	cli := findCLI(t)
	if os.Getenv("TF_ACC_TERRAFORM_PATH") != cli {
		t.Setenv("TF_ACC_TERRAFORM_PATH", cli)
	}
	// An unqualified provider resolves to the CLI's own registry (registry.opentofu.org for
	// OpenTofu, registry.terraform.io for Terraform); the framework reattaches the in-process
	// provider under TF_ACC_PROVIDER_HOST, so the two must agree.
	if os.Getenv("TF_ACC_PROVIDER_HOST") == "" {
		t.Setenv("TF_ACC_PROVIDER_HOST", RegistryHost(t, cli))
	}
}

func findCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("TF_ACC_TERRAFORM_PATH=%s: %v", p, err)
		}
		return p
	}
	switch cli := os.Getenv("CLI"); cli {
	case "":
	case "tofu", "terraform":
		local := filepath.Join(repoRoot(), "bin", cli)
		if _, err := os.Stat(local); err == nil {
			return local
		}
		if p, err := exec.LookPath(cli); err == nil {
			return p
		}
		t.Fatalf("CLI=%s: neither %s nor %s on PATH: run `make %s` (builds it from the Go module proxy), or set TF_ACC_TERRAFORM_PATH", cli, local, cli, cli)
	default:
		t.Fatalf("CLI=%s: want tofu or terraform (or set TF_ACC_TERRAFORM_PATH to the binary)", cli)
	}
	for _, name := range []string{"tofu", "terraform"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	local := filepath.Join(repoRoot(), "bin", "tofu")
	if _, err := os.Stat(local); err == nil {
		return local
	}
	t.Fatalf("acceptance tests need OpenTofu or Terraform: run `make tofu` (builds ./bin/tofu from the Go module proxy) or `make terraform`, or set TF_ACC_TERRAFORM_PATH")
	return ""
}

// Registry hosts the CLIs give an unqualified provider source such as gpucluster/gpucluster.
const (
	OpenTofuRegistry  = "registry.opentofu.org"
	TerraformRegistry = "registry.terraform.io"
)

var registryHosts sync.Map // CLI path -> its registry host

// RegistryHost tells OpenTofu from HashiCorp Terraform by what `<cli> version` prints and returns
// the registry host that CLI fills in for an unqualified provider source. Tests that write a
// dev_overrides block or a fully qualified source use it, so they run under either CLI (or use
// the short source "gpucluster/gpucluster", which both CLIs accept).
func RegistryHost(t *testing.T, cli string) string {
	t.Helper()
	if h, ok := registryHosts.Load(cli); ok {
		return h.(string)
	}
	cmd := exec.Command(cli, "version")
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE=", "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", cli, err, out)
	}
	var host string
	switch {
	case strings.Contains(string(out), "OpenTofu v"):
		host = OpenTofuRegistry
	case strings.Contains(string(out), "Terraform v"):
		host = TerraformRegistry
	default:
		t.Fatalf("%s version printed neither OpenTofu nor Terraform:\n%s", cli, out)
	}
	registryHosts.Store(cli, host)
	return host
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
