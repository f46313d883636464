package bundle_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// realisticSpec has names as long as a real deployment's get: a bucket of the full 63
// characters, a key under the cluster and pool and named by the digest, a role of 64.
func realisticSpec() bundle.StubSpec {
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	return bundle.StubSpec{
		Region:   "cn-wulanchabu",
		Bucket:   "gpucluster-bootstrap-1000000000000000-cn-wulanchabu-prod-a1b2c3", // 63
		Key:      "bundles/research-cluster-ai-training-prod/pools/gpu-h800-spot-pool-02/" + strings.TrimPrefix(digest, "sha256:") + ".tar.gz",
		Digest:   digest,
		RoleName: "gpucluster-research-cluster-ai-training-prod-gpu-worker-nodes-rl", // 64
	}
}

// stubDoc is the stub read back as cloud-init reads it.
type stubDoc struct {
	WriteFiles []struct{ Path, Permissions, Encoding, Content string } `json:"write_files"`
	RunCmd     [][]string                                              `json:"runcmd"`
}

func parseStub(t *testing.T, stub string) stubDoc {
	t.Helper()
	if !strings.HasPrefix(stub, "#cloud-config\n") {
		t.Fatalf("stub does not start with #cloud-config:\n%s", stub)
	}
	var d stubDoc
	if err := yaml.UnmarshalStrict([]byte(stub), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.WriteFiles) != 1 || len(d.RunCmd) != 1 || d.RunCmd[0][0] != d.WriteFiles[0].Path || d.WriteFiles[0].Permissions != "0700" {
		t.Fatalf("stub is not one script and the command that runs it:\n%s", stub)
	}
	return d
}

// The stub for long, realistic names fits the 4 KiB, is valid cloud-config to cloud-init itself,
// and carries the script bash reads without a syntax error, with the spec as its arguments.
func TestStubFitsAndParses(t *testing.T) {
	spec := realisticSpec()
	stub, err := bundle.Stub(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stub for the realistic spec: %d bytes of %d", len(stub), bundle.MaxStubBytes)
	if len(stub) > bundle.MaxStubBytes {
		t.Fatalf("stub is %d bytes", len(stub))
	}
	d := parseStub(t, stub)
	wantArgs := []string{bundle.FetchScriptPath, bundle.DefaultMetadataEndpoint,
		"https://" + spec.Bucket + ".oss-cn-wulanchabu-internal.aliyuncs.com", spec.Region, spec.Bucket, spec.Key, spec.Digest, spec.RoleName, bootstrap.BootstrapUnit}
	if strings.Join(d.RunCmd[0], "\n") != strings.Join(wantArgs, "\n") {
		t.Errorf("runcmd %q, want %q", d.RunCmd[0], wantArgs)
	}
	back, ok := bundle.SpecOfCommand(d.RunCmd[0])
	want := spec
	want.MetadataEndpoint, want.OSSEndpoint = wantArgs[1], wantArgs[2]
	if !ok || back != want {
		t.Errorf("SpecOfCommand of the stub's runcmd: %+v %v, want %+v", back, ok, want)
	}
	for _, bad := range [][]string{d.RunCmd[0][:8], append(slices.Clone(d.RunCmd[0][:6]), "sha256:nothex", spec.RoleName, bootstrap.BootstrapUnit),
		append([]string{"/bin/other"}, d.RunCmd[0][1:]...)} {
		if _, ok := bundle.SpecOfCommand(bad); ok {
			t.Errorf("SpecOfCommand took %q", bad)
		}
	}
	files, err := bundle.FromCloudInit(strings.Replace(stub, "runcmd:", "x-runcmd:", 1))
	if err == nil || !strings.Contains(err.Error(), "x-runcmd") {
		t.Fatalf("the stub's write_files should decode like any other (then fail on the renamed key): %v %v", files, err)
	}
	script := decodeScript(t, d)
	if script != bundle.StubScript() {
		t.Fatal("the stub does not carry StubScript")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "fetch.sh")
	if err := os.WriteFile(p, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", p).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "stub.cfg")
	if err := os.WriteFile(cfg, []byte(stub), 0o600); err != nil {
		t.Fatal(err)
	}
	ci := testtools.Require(t, "cloud-init", "cloud-init")
	if out, err := exec.Command(ci, "schema", "--config-file", cfg).CombinedOutput(); err != nil {
		t.Fatalf("cloud-init schema: %v\n%s", err, out)
	}
}

// decodeScript undoes the stub's gz+b64, as cloud-init's write_files does.
func decodeScript(t *testing.T, d stubDoc) string {
	t.Helper()
	w := d.WriteFiles[0]
	if w.Encoding != "gz+b64" {
		t.Fatalf("encoding %q", w.Encoding)
	}
	files, err := bundle.FromCloudInit("#cloud-config\nwrite_files:\n- {path: /x, encoding: gz+b64, content: '" + w.Content + "'}\n" +
		"runcmd:\n- [/bin/sh, -c, '" + bundle.StartCommand + "']\n")
	if err != nil {
		t.Fatal(err)
	}
	return string(files["/x"].Content)
}

// The script, with its comments, is clean to shellcheck (make test-tools installs it); the
// comment-less copy the stub carries keeps the shebang and no comment.
func TestFetchScriptLint(t *testing.T) {
	script := bundle.StubScript()
	if !strings.HasPrefix(script, "#!/bin/bash\n") || strings.Contains(script, "\n#") || strings.Contains(script, "set -x") {
		t.Errorf("stub script: shebang kept, comment lines out, no set -x:\n%s", script)
	}
	sc := testtools.Require(t, "shellcheck", "shellcheck")
	if out, err := exec.Command(sc, "-s", "bash", "fetch-bundle.sh").CombinedOutput(); err != nil {
		t.Fatalf("shellcheck: %v\n%s", err, out)
	}
}

func TestStubRefusesBadSpecs(t *testing.T) {
	if _, err := bundle.Stub(realisticSpec()); err != nil {
		t.Fatalf("the spec each case spoils must render: %v", err)
	}
	cases := map[string]func(*bundle.StubSpec){
		"bucket upper case":   func(s *bundle.StubSpec) { s.Bucket = "Bucket" },
		"bucket too short":    func(s *bundle.StubSpec) { s.Bucket = "ab" },
		"bucket ends in -":    func(s *bundle.StubSpec) { s.Bucket = "bucket-" },
		"key with ..":         func(s *bundle.StubSpec) { s.Key = "a/../b" },
		"key with //":         func(s *bundle.StubSpec) { s.Key = "a//b" },
		"key leading /":       func(s *bundle.StubSpec) { s.Key = "/a" },
		"key with space":      func(s *bundle.StubSpec) { s.Key = "a b" },
		"key with newline":    func(s *bundle.StubSpec) { s.Key = "a\nAuthorization: x" },
		"key over 1023":       func(s *bundle.StubSpec) { s.Key = strings.Repeat("k", 1024) },
		"digest not sha256":   func(s *bundle.StubSpec) { s.Digest = "md5:abc" },
		"role with /":         func(s *bundle.StubSpec) { s.RoleName = "a/b" },
		"role over 64":        func(s *bundle.StubSpec) { s.RoleName = strings.Repeat("r", 65) },
		"region":              func(s *bundle.StubSpec) { s.Region = "Hangzhou" },
		"endpoint query":      func(s *bundle.StubSpec) { s.OSSEndpoint = "http://127.0.0.1:1/b?x=1" },
		"endpoint trailing /": func(s *bundle.StubSpec) { s.MetadataEndpoint = "http://100.100.100.200/" },
		"endpoint not http":   func(s *bundle.StubSpec) { s.MetadataEndpoint = "file:///etc" },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			s := realisticSpec()
			change(&s)
			if stub, err := bundle.Stub(s); err == nil {
				t.Fatalf("rendered (%d bytes)", len(stub))
			}
		})
	}
}

// Every field is valid, yet together they make a stub over MaxStubBytes: refused, saying so.
func TestStubRefusesOversize(t *testing.T) {
	s := realisticSpec()
	s.Key = strings.Repeat("k", 1023)
	s.OSSEndpoint = "http://" + strings.Repeat("h", 400) + ".example/" + s.Bucket
	if stub, err := bundle.Stub(s); err == nil || !strings.Contains(err.Error(), "more than the 4096") {
		t.Fatalf("%d bytes: %v, want the size refusal", len(stub), err)
	}
}

// The script's HMAC-SHA256, done in bash so the secret stays off every command line, is RFC
// 2104's: the same as crypto/hmac for keys shorter than, as long as and longer than SHA-256's
// 64-byte block (the first of V4's chain is "aliyun_v4" and the secret, the others 32 bytes),
// and messages with the newlines of a string to sign.
func TestScriptHMACMatchesGo(t *testing.T) {
	funcs, ok := strings.CutSuffix(bundle.StubScript(), "main \"$@\"\n")
	if !ok {
		t.Fatal(`the script no longer ends with main "$@"`)
	}
	for _, n := range []int{0, 1, 32, 53, 63, 64, 65, 100} {
		key := make([]byte, n)
		_, _ = rand.Read(key)
		msg := "OSS4-HMAC-SHA256\n20250701T000000Z\n20250701/cn-wulanchabu/oss/aliyun_v4_request\n" + rand.Text()
		out, err := exec.Command("bash", "-c", funcs+`hmac "$1" "$2"`, "hmac", hex.EncodeToString(key), msg).Output()
		if err != nil {
			t.Fatalf("key of %d: %v", n, err)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msg))
		if got, want := string(out), hex.EncodeToString(m.Sum(nil)); got != want {
			t.Errorf("key of %d bytes: %s, want %s", n, got, want)
		}
	}
	if out, err := exec.Command("bash", "-c", funcs+`hexof "$1"`, "hexof", "aliyun_v4Secret+/=").Output(); err != nil ||
		string(out) != hex.EncodeToString([]byte("aliyun_v4Secret+/=")) {
		t.Errorf("hexof: %q %v", out, err)
	}
}

// SpecOfUserData finds the stub's spec in user data as ECS holds it (packed by
// bootstrap.PackUserData, merged with a user's part by bootstrap.Merge) and finds none in user data
// that carries the bootstrap inline.
func TestSpecOfUserData(t *testing.T) {
	spec := realisticSpec()
	stub, err := bundle.Stub(spec)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := bootstrap.Merge(stub, "#cloud-config\nruncmd:\n  - [echo, user]\n")
	if err != nil {
		t.Fatal(err)
	}
	for name, ud := range map[string]string{"the stub": stub, "packed": bootstrap.PackUserData(stub), "merged and packed": bootstrap.PackUserData(merged)} {
		got, ok, err := bundle.SpecOfUserData(ud)
		if err != nil || !ok || got.Bucket != spec.Bucket || got.Key != spec.Key || got.Digest != spec.Digest || got.RoleName != spec.RoleName {
			t.Errorf("%s: SpecOfUserData = %+v, %v, %v; want %+v", name, got, ok, err, spec)
		}
	}
	inline := "#cloud-config\nwrite_files:\n  - path: /etc/x\n    content: x\nruncmd:\n  - [systemctl, start, gpucluster-bootstrap.service]\n"
	if got, ok, err := bundle.SpecOfUserData(inline); ok || err != nil {
		t.Errorf("inline user data: SpecOfUserData = %+v, %v, %v; want no stub", got, ok, err)
	}
}
