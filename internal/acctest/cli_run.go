package acctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// CLIRun drives the real CLI (OpenTofu or Terraform, as PreCheck finds it) in a working directory
// against a provider binary built from this module, the way a user runs it. The testing framework
// serves the provider in-process, cannot kill its CLI mid-apply (the crash tests need that) and
// cannot read back a state with modules (the scenario cluster tests need that).
type CLIRun struct {
	T   *testing.T
	CLI string
	// Dir is the working directory; Env the whole environment of every command.
	Dir string
	Env []string
}

// NewCLIRun builds the provider into a temporary directory and returns a run in a fresh working
// directory whose CLI configuration serves it (dev_overrides).
func NewCLIRun(t *testing.T) *CLIRun {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	PreCheck(t)
	tofu := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tofu == "" {
		t.Fatal("PreCheck found no OpenTofu binary")
	}
	bin := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "terraform-provider-gpucluster"), ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	dir := t.TempDir()
	rc := filepath.Join(dir, "tofurc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "gpucluster/gpucluster" = %q
  }
  direct {}
}
`, bin)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "HOME=" + dir}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	return &CLIRun{T: t, CLI: tofu, Dir: dir, Env: env}
}

// Write replaces the working directory's main.tf.
func (r *CLIRun) Write(config string) {
	r.T.Helper()
	if err := os.WriteFile(filepath.Join(r.Dir, "main.tf"), []byte(config), 0o600); err != nil {
		r.T.Fatal(err)
	}
}

// Command is the CLI with args (flags included) in the working directory, in a process group of its own so the
// provider plugin it starts can be killed with it.
func (r *CLIRun) Command(args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(r.CLI, args...)
	cmd.Dir = r.Dir
	cmd.Env = r.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// Run runs the CLI to completion and returns its exit code and output.
func (r *CLIRun) Run(args ...string) (int, string) {
	r.T.Helper()
	cmd, out := r.Command(args...)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	default:
		r.T.Fatalf("running tofu %s: %v", strings.Join(args, " "), err)
		return -1, ""
	}
}

// MustRun runs the CLI and fails the test unless it exits 0.
func (r *CLIRun) MustRun(args ...string) string {
	r.T.Helper()
	code, out := r.Run(args...)
	if code != 0 {
		r.T.Fatalf("tofu %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// UseEmulator points the provider at the emulator at url through the environment, with the
// emulator's region and credentials, as a user with GPUCLUSTER_ENDPOINT set runs it.
func (r *CLIRun) UseEmulator(url string) {
	r.Env = append(r.Env,
		"GPUCLUSTER_ENDPOINT="+url,
		"ALIBABA_CLOUD_REGION="+Region,
		"ALIBABA_CLOUD_ACCESS_KEY_ID="+AccessKey,
		"ALIBABA_CLOUD_ACCESS_KEY_SECRET="+SecretKey,
	)
}
