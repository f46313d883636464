package ossstate

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	osscredentials "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

const (
	bucket   = "team-state-0001"
	prefix   = "clusters/ai-training"
	stateKey = prefix + "/terraform.tfstate" // where the backend puts the default workspace
)

// root is a stack whose state lives in OSS. terraform_data is built into the CLI, so the test
// needs no provider: it is about where the state goes, not what it holds. The endpoint and the
// keys come from the environment (ALICLOUD_*), as a team's CI would pass them, so no secret is
// written into .terraform/.
const root = `
terraform {
  backend "oss" {
    bucket = "` + bucket + `"
    prefix = "` + prefix + `"
    key     = "terraform.tfstate"
    encrypt = true
  }
}

variable "owner" {
  type = string
}

resource "terraform_data" "cluster" {
  input = var.owner
}

output "owner" {
  value = terraform_data.cluster.output
}
`

// A team shares one stack: alice applies it, bob (another checkout, nothing local in common)
// reads her state, finds nothing to change, and applies a change of his own. The bucket is
// versioned, so both states are kept.
func TestAccOSSBackend_teamState(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	acctest.PreCheck(t)
	cli := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if acctest.RegistryHost(t, cli) != acctest.OpenTofuRegistry {
		t.Skipf("%s is HashiCorp Terraform; the one `make terraform` builds has no oss backend (its module is not on the Go module proxy): run this test with OpenTofu", cli)
	}
	emu := acctest.StartEmulator(t)
	ctx := context.Background()
	client := ossClient(emu.URL)
	if _, err := client.PutBucket(ctx, &oss.PutBucketRequest{Bucket: oss.Ptr(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutBucketVersioning(ctx, &oss.PutBucketVersioningRequest{
		Bucket:                  oss.Ptr(bucket),
		VersioningConfiguration: &oss.VersioningConfiguration{Status: oss.VersionEnabled},
	}); err != nil {
		t.Fatal(err)
	}
	// A state bucket encrypts at rest by default. The backend's encrypt = true (as
	// examples/terragrunt sets it) also sends x-oss-server-side-encryption: AES256 with each
	// PutObject; the emulator accepts that header but encrypts by the bucket's default only.
	if _, err := client.PutBucketEncryption(ctx, &oss.PutBucketEncryptionRequest{
		Bucket: oss.Ptr(bucket),
		ServerSideEncryptionRule: &oss.ServerSideEncryptionRule{
			ApplyServerSideEncryptionByDefault: &oss.ApplyServerSideEncryptionByDefault{SSEAlgorithm: oss.Ptr("AES256")},
		},
	}); err != nil {
		t.Fatal(err)
	}

	alice, bob := newCheckout(t, cli, emu.URL), newCheckout(t, cli, emu.URL)
	alice.run("init", "-input=false", "-no-color")
	alice.run("apply", "-auto-approve", "-input=false", "-no-color", "-var", "owner=alice")
	if _, err := os.Stat(filepath.Join(alice.dir, "terraform.tfstate")); err == nil {
		t.Fatal("the apply wrote a local terraform.tfstate: the oss backend was not used")
	}
	got, sse := stateObject(t, client, nil)
	if !strings.Contains(got, `"alice"`) {
		t.Fatalf("%s after alice's apply does not hold her value:\n%s", stateKey, got)
	}
	if sse != "AES256" {
		t.Fatalf("%s is stored with server-side encryption %q, want AES256", stateKey, sse)
	}

	bob.run("init", "-input=false", "-no-color")
	if got := strings.TrimSpace(bob.run("output", "-raw", "owner")); got != "alice" {
		t.Fatalf("bob reads owner = %q from the shared state, want alice", got)
	}
	// -detailed-exitcode: 0 means no changes, 2 changes. Bob's plan with alice's value is empty
	// only because he refreshed against her state.
	if out, code := bob.exec("plan", "-detailed-exitcode", "-input=false", "-no-color", "-var", "owner=alice"); code != 0 {
		t.Fatalf("bob's plan with alice's inputs exits %d (want 0: nothing to change):\n%s", code, out)
	}
	bob.run("apply", "-auto-approve", "-input=false", "-no-color", "-var", "owner=bob")
	if got := strings.TrimSpace(alice.run("output", "-raw", "owner")); got != "bob" {
		t.Fatalf("alice reads owner = %q after bob's apply, want bob", got)
	}

	calls := emu.Stats().Calls
	t.Logf("OSS calls the backend and the test made: %v", calls)
	if calls["PutObject"] < 2 || calls["GetObject"] < 2 {
		t.Fatalf("the emulator saw PutObject %d and GetObject %d times; the states did not go through OSS", calls["PutObject"], calls["GetObject"])
	}

	// Versioned: the latest version is bob's state, and alice's is still there to roll back to.
	versions, err := client.ListObjectVersions(ctx, &oss.ListObjectVersionsRequest{Bucket: oss.Ptr(bucket), Prefix: oss.Ptr(stateKey)})
	if err != nil {
		t.Fatal(err)
	}
	var latest string
	var older []string
	for _, v := range versions.ObjectVersions {
		if oss.ToString(v.Key) != stateKey {
			continue
		}
		if v.IsLatest {
			latest = oss.ToString(v.VersionId)
		} else {
			older = append(older, oss.ToString(v.VersionId))
		}
	}
	if latest == "" || len(older) == 0 {
		t.Fatalf("versions of %s: latest %q, older %v; want the latest and alice's before it", stateKey, latest, older)
	}
	if got, _ := stateObject(t, client, &latest); !strings.Contains(got, `"bob"`) {
		t.Fatalf("the latest version does not hold bob's value:\n%s", got)
	}
	for _, id := range older {
		if got, _ := stateObject(t, client, oss.Ptr(id)); strings.Contains(got, `"alice"`) {
			return
		}
	}
	t.Fatalf("no older version of %s holds alice's state (versions %v)", stateKey, older)
}

func ossClient(endpoint string) *oss.Client {
	return oss.NewClient(oss.LoadDefaultConfig().
		WithRegion(acctest.Region).
		WithEndpoint(endpoint).
		WithUsePathStyle(true).
		WithDisableSSL(true).
		WithCredentialsProvider(osscredentials.NewStaticCredentialsProvider(acctest.AccessKey, acctest.SecretKey)))
}

// stateObject reads the state object, the latest version or the one given, and the server-side
// encryption it is stored with.
func stateObject(t *testing.T, client *oss.Client, versionID *string) (body, sse string) {
	t.Helper()
	res, err := client.GetObject(context.Background(), &oss.GetObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(stateKey), VersionId: versionID})
	if err != nil {
		t.Fatalf("reading %s (version %s): %v", stateKey, oss.ToString(versionID), err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), oss.ToString(res.ServerSideEncryption)
}

// checkout is one person's working directory with the stack, and the environment their CLI runs
// in: the emulator's OSS and keys, nothing from the machine's CLI configuration or ~/.aliyun.
type checkout struct {
	t   *testing.T
	cli string
	dir string
	env []string
}

func newCheckout(t *testing.T, cli, endpoint string) *checkout {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(root), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HOME=" + dir, "TF_CLI_CONFIG_FILE=", "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"ALICLOUD_OSS_ENDPOINT=" + endpoint, "ALICLOUD_REGION=" + acctest.Region,
		"ALICLOUD_ACCESS_KEY=" + acctest.AccessKey, "ALICLOUD_SECRET_KEY=" + acctest.SecretKey,
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	return &checkout{t: t, cli: cli, dir: dir, env: env}
}

// exec runs the CLI and returns its combined output and exit code.
func (c *checkout) exec(args ...string) (string, int) {
	c.t.Helper()
	cmd := exec.Command(c.cli, args...)
	cmd.Dir, cmd.Env = c.dir, c.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	default:
		c.t.Fatalf("%s %s: %v", c.cli, strings.Join(args, " "), err)
		return "", -1
	}
}

// run runs the CLI and fails the test unless it succeeds.
func (c *checkout) run(args ...string) string {
	c.t.Helper()
	out, code := c.exec(args...)
	if code != 0 {
		c.t.Fatalf("%s %s exited %d:\n%s", filepath.Base(c.cli), strings.Join(args, " "), code, out)
	}
	return out
}
