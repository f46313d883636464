package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestJoinTokenExpiresWithinADay: the token the provider configures is kubeadm init's first
// bootstrap token, and it expires within 24 hours (issue #31): it lives in Terraform state, so it
// must not open the cluster for good.
func TestJoinTokenExpiresWithinADay(t *testing.T) {
	doc, err := Render(controlPlane())
	if err != nil {
		t.Fatal(err)
	}
	main := file(t, decodeCloudConfig(t, doc), KubeadmPath).Content
	var init initConfiguration
	if err := yaml.Unmarshal([]byte(strings.Split(main, "---\n")[0]), &init); err != nil {
		t.Fatal(err)
	}
	if len(init.BootstrapTokens) != 1 || init.BootstrapTokens[0].Token != testToken {
		t.Fatalf("bootstrapTokens = %d tokens; want the configured one", len(init.BootstrapTokens))
	}
	ttl, err := time.ParseDuration(init.BootstrapTokens[0].TTL)
	if err != nil || ttl <= 0 || ttl > 24*time.Hour {
		t.Errorf("bootstrap token ttl = %q (%v); want more than 0 (0 never expires) and at most 24h", init.BootstrapTokens[0].TTL, err)
	}
}

// store is a JoinStore of a worker pool and the control plane that publishes its token.
func store(tokenKey string, publish ...string) *JoinStore {
	return &JoinStore{ObjectStore: ObjectStore{Region: "cn-wulanchabu", Bucket: "gc-boot", RoleName: "wk", MetadataEndpoint: "http://100.100.100.200",
		OSSEndpoint: "https://gc-boot.oss-cn-wulanchabu-internal.aliyuncs.com"}, TokenKey: tokenKey, PublishKeys: publish}
}

// TestJoinStore: with a join store a worker's document holds no token at all (its join reads the
// stored one, and the function that puts it in place works in bash), and every control-plane
// node's timer creates tokens of at most 24 h and stores them at each publish key.
func TestJoinStore(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	w := worker()
	w.Kubernetes.JoinStore = store("b/workers/join-token")
	doc, err := Render(w)
	if err != nil {
		t.Fatal(err)
	}
	cc := decodeCloudConfig(t, doc)
	for _, f := range cc.WriteFiles {
		content, err := fileContent(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(content, testToken) || strings.Contains(content, strings.Split(testToken, ".")[1]) {
			t.Errorf("the worker's %s holds the configured join token", f.Path)
		}
	}
	// stored_token, run with a fetch script that answers a token, rewrites the configuration.
	script := file(t, cc, ScriptPath).Content
	var def string
	for line := range strings.Lines(script) {
		if strings.Contains(line, "stored_token() {") {
			def = strings.TrimSpace(line)
		}
	}
	if def == "" || !strings.Contains(script, "stored_token "+KubeadmPath) {
		t.Fatalf("the worker's script does not read the stored token before kubeadm join:\n%s", script)
	}
	dir := t.TempDir()
	fetch, conf := filepath.Join(dir, "fetch"), filepath.Join(dir, "kubeadm.yaml")
	const stored = "xyz123.0123456789xyzxyz"
	if err := os.WriteFile(fetch, []byte("#!/bin/bash\n[ \"$1 $6\" = 'get b/workers/join-token' ] && printf %s "+stored+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(file(t, cc, KubeadmPath).Content), 0o600); err != nil {
		t.Fatal(err)
	}
	def = strings.ReplaceAll(def, FetchScriptPath, fetch)
	if out, err := exec.Command(bash, "-c", def+"\nstored_token "+conf).CombinedOutput(); err != nil {
		t.Fatalf("stored_token: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(conf)
	if !strings.Contains(string(got), "token: "+stored) || strings.Contains(string(got), storedTokenPlaceholder) {
		t.Fatalf("after stored_token the configuration is:\n%s", got)
	}

	cp := controlPlane()
	cp.Kubernetes.JoinStore = store("", "b/workers/join-token", "b/control-plane-join/join-token")
	cp.Kubernetes.JoinStore.RoleName = "cp"
	doc, err = Render(cp)
	if err != nil {
		t.Fatal(err)
	}
	cc = decodeCloudConfig(t, doc)
	timer := file(t, cc, JoinTokenScriptPath).Content
	for _, want := range []string{"kubeadm token create --ttl " + JoinTokenTTL, " put " + cp.Kubernetes.JoinStore.storeArgs("b/workers/join-token"),
		" put " + cp.Kubernetes.JoinStore.storeArgs("b/control-plane-join/join-token")} {
		if !strings.Contains(timer, want) {
			t.Errorf("the token timer's script lacks %q:\n%s", want, timer)
		}
	}
	if !strings.Contains(file(t, cc, ScriptPath).Content, "systemctl enable --now "+joinTokenUnit+".timer") {
		t.Errorf("the first control-plane node does not start the token timer")
	}
	if _, err := Validate(Options{Role: RoleGPUWorker, Kubernetes: Kubernetes{JoinToken: testToken, JoinStore: store("", "k")}}); err == nil {
		t.Errorf("a worker with publish keys and no token key was accepted")
	}
	bad := controlPlane()
	bad.Kubernetes.JoinStore = store("", "b/workers/join-token", "b/x;reboot", "b/y z")
	if _, err := Validate(bad); err == nil || !strings.Contains(err.Error(), "bootstrap_bundle.publish_join_token_keys") || !strings.Contains(err.Error(), "b/x;reboot") {
		t.Errorf("publish keys a script cannot take: %v; want an error naming the attribute and the first bad key", err)
	}
}
