package bundle_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	osscred "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// fetchEnv is an in-process emulator with a network for instances and an OSS client with the
// account's own key, which uploads bundles and sets bucket policies as the provider will.
type fetchEnv struct {
	srv   *emulator.Server
	url   string
	cloud *cloudtest.Cloud
	net   cloudtest.Network
	oss   *oss.Client
	curl  string
	runs  int // instances run so far: each RunInstances gets its own ClientToken
}

func newFetchEnv(t *testing.T) *fetchEnv {
	t.Helper()
	curl := testtools.Require(t, "curl", "curl")
	srv, url := cloudtest.StartEmulator(t, emulator.Config{AccessKey: "bundletest", SecretKey: "bundletest-secret", BootTime: cloudtest.BootTime})
	ctx := cloudtest.Context(t)
	c, err := cloud.New(ctx, cloud.Config{Region: cloudtest.Region, Endpoint: url, UserAgent: "gpucluster-bundletest/0",
		Credentials: cloud.Credentials{AccessKeyID: "bundletest", AccessKeySecret: "bundletest-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	e := &fetchEnv{srv: srv, url: url, cloud: &cloudtest.Cloud{Client: c, Emulator: srv}, curl: curl}
	e.net = e.cloud.CreateNetwork(ctx, t, cloudtest.Region+"-a")
	e.oss = oss.NewClient(oss.LoadDefaultConfig().
		WithCredentialsProvider(osscred.NewStaticCredentialsProvider("bundletest", "bundletest-secret")).
		WithRegion(cloudtest.Region).WithEndpoint(url).WithUsePathStyle(true).WithRetryMaxAttempts(1))
	return e
}

// instance runs one instance with the RAM role ("" for none) and answers its id.
func (e *fetchEnv) instance(t *testing.T, role string) string {
	t.Helper()
	e.runs++
	ids, err := e.cloud.Client.RunInstances(cloudtest.Context(t), cloud.RunInstancesInput{
		ClientToken: fmt.Sprintf("bundle-%d", e.runs), InstanceType: "ecs.gn6i-c4g1.xlarge", ZoneID: cloudtest.Region + "-a",
		ImageID: "ubuntu_22_04_x64_20G_alibase_20240101.vhd", SecurityGroupID: e.net.SecurityGroupID,
		VSwitchID: e.net.VSwitchIDs[cloudtest.Region+"-a"], Amount: 1, MinAmount: 1, RAMRoleName: role,
		SystemDisk: cloud.Disk{Category: "cloud_essd", SizeGiB: 40}})
	if err != nil {
		t.Fatal(err)
	}
	return ids[0]
}

// bucket makes a bucket whose policy lets sessions of role read objects under prefix, and
// nothing else (the owner's key aside), and uploads the archive at key.
func (e *fetchEnv) bucket(t *testing.T, name, role, prefix, key string, archive []byte) {
	t.Helper()
	ctx := cloudtest.Context(t)
	if _, err := e.oss.PutBucket(ctx, &oss.PutBucketRequest{Bucket: oss.Ptr(name)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.oss.PutObject(ctx, &oss.PutObjectRequest{Bucket: oss.Ptr(name), Key: oss.Ptr(key), Body: strings.NewReader(string(archive))}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:GetObject"],` +
		`"Principal":["arn:sts::` + core.AccountID + `:assumed-role/` + role + `/*"],"Resource":["acs:oss:*:*:` + name + `/` + prefix + `*"]}]}`
	if _, err := e.oss.PutBucketPolicy(ctx, &oss.PutBucketPolicyRequest{Bucket: oss.Ptr(name), Body: strings.NewReader(policy)}); err != nil {
		t.Fatal(err)
	}
}

// roleKeys are the keys the metadata service hands the instance, by name: the stub must never
// print them.
func (e *fetchEnv) roleKeys(t *testing.T, instance, role string) map[string]string {
	t.Helper()
	resp, err := http.Get(e.url + emulator.MetadataPath + "/" + instance + "/latest/meta-data/ram/security-credentials/" + role)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var k struct{ AccessKeyId, AccessKeySecret, SecurityToken string }
	if err := json.Unmarshal(body, &k); err != nil || k.AccessKeySecret == "" {
		t.Fatalf("role keys of %s: %v %s", instance, err, body)
	}
	return map[string]string{"AccessKeyId": k.AccessKeyId, "AccessKeySecret": k.AccessKeySecret, "SecurityToken": k.SecurityToken}
}

// run is what one boot of the stub left behind.
type run struct {
	err       error
	stderr    string
	root      string
	systemctl string // the stubbed systemctl's calls, one a line
	curlArgv  string // every argument curl was given, one a line
	tmp       string
}

// boot plays cloud-init on the stub: write_files writes the script under a temporary root, then
// runcmd runs it, with systemctl stubbed and curl wrapped to record its command lines. The
// instance's metadata service and OSS are the emulator's.
func (e *fetchEnv) boot(t *testing.T, instance string, spec bundle.StubSpec, env ...string) run {
	t.Helper()
	spec.MetadataEndpoint = e.url + emulator.MetadataPath + "/" + instance
	spec.OSSEndpoint = e.url + "/" + spec.Bucket
	stub, err := bundle.Stub(spec)
	if err != nil {
		t.Fatal(err)
	}
	d := parseStub(t, stub)
	dir := t.TempDir()
	r := run{root: filepath.Join(dir, "root"), tmp: filepath.Join(dir, "tmp")}
	bin := filepath.Join(dir, "bin")
	script := filepath.Join(r.root, d.WriteFiles[0].Path)
	for _, p := range []string{filepath.Dir(script), bin, r.tmp} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExec(t, script, decodeScript(t, d))
	writeExec(t, filepath.Join(bin, "systemctl"), "#!/bin/sh\necho \"$*\" >>'"+dir+"/systemctl.log'\n")
	writeExec(t, filepath.Join(bin, "curl"), "#!/bin/sh\nprintf '%s\\n' \"$@\" >>'"+dir+"/curl.log'\nexec '"+e.curl+"' \"$@\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, d.RunCmd[0][1:]...)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "TMPDIR="+r.tmp, "GPUCLUSTER_BUNDLE_ROOT="+r.root,
		"GPUCLUSTER_BUNDLE_TRIES=2", "GPUCLUSTER_BUNDLE_DELAY=0")
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	r.err = cmd.Run()
	r.stderr = stderr.String()
	r.systemctl = readOrEmpty(filepath.Join(dir, "systemctl.log"))
	r.curlArgv = readOrEmpty(filepath.Join(dir, "curl.log"))
	return r
}

func writeExec(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o700); err != nil {
		t.Fatal(err)
	}
}

func readOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// secretsKept fails the test if a secret (by name: the failure names it, never shows it) is in
// the stub's output or on curl's command lines, or if the bundle was left in the temporary
// directory.
func (r run) secretsKept(t *testing.T, secrets ...map[string]string) {
	t.Helper()
	for _, m := range secrets {
		for name, s := range m {
			if s == "" {
				t.Fatalf("secret %s is empty", name)
			}
			if strings.Contains(r.stderr, s) || strings.Contains(r.curlArgv, s) {
				t.Errorf("secret %s is in the output or on a command line", name)
			}
		}
	}
	for _, header := range []string{"Authorization", "x-oss-security-token", "X-aliyun-ecs-metadata-token"} {
		if strings.Contains(r.curlArgv, header) {
			t.Errorf("header %s is on curl's command line", header)
		}
	}
	if left, _ := os.ReadDir(r.tmp); len(left) > 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}

func (r run) failed(t *testing.T, why string) {
	t.Helper()
	var exit *exec.ExitError
	if !errors.As(r.err, &exit) || !strings.Contains(r.stderr, why) {
		t.Fatalf("want a failure naming %q, got %v:\n%s", why, r.err, r.stderr)
	}
	if r.systemctl != "" {
		t.Errorf("systemctl ran after a failure: %s", r.systemctl)
	}
	if left, _ := os.ReadDir(filepath.Join(r.root, "etc")); len(left) > 0 {
		t.Errorf("files unpacked after a failure: %v", left)
	}
}
