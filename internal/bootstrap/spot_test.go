package bootstrap

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func spotWorker() Options {
	o := worker()
	o.ProviderID, o.SpotInterruptionHandler = true, true
	return o
}

// TestRenderSpotHandler: a spot worker writes the handler and its unit, enables it after the join
// and registers with a provider id; a worker without the options has none of it, and a control
// plane never does.
func TestRenderSpotHandler(t *testing.T) {
	doc, err := Render(spotWorker())
	if err != nil {
		t.Fatal(err)
	}
	cc := decodeCloudConfig(t, doc)
	script := file(t, cc, SpotHandlerScriptPath)
	if script.Permissions != "0700" || !strings.Contains(script.Content, SpotMetadataPath) {
		t.Errorf("handler script mode %s, polls %q", script.Permissions, SpotMetadataPath)
	}
	unit := file(t, cc, systemdDir+spotHandlerService)
	if !strings.Contains(unit.Content, "ExecStart="+SpotHandlerScriptPath) {
		t.Errorf("unit:\n%s", unit.Content)
	}
	boot := file(t, cc, ScriptPath).Content
	join, enable, pid := strings.Index(boot, "  join "+KubeadmPath), strings.Index(boot, "systemctl enable --now "+spotHandlerService), strings.Index(boot, "--provider-id=${region}.${instance}")
	if join < 0 || enable < join || pid < 0 || pid > join {
		t.Errorf("want the provider id before the join and the handler enabled after it (provider id %d, join %d, enable %d)", pid, join, enable)
	}
	for name, o := range map[string]Options{"worker": worker(), "control plane": func() Options {
		o := controlPlane()
		o.SpotInterruptionHandler, o.ProviderID = true, true
		return o
	}()} {
		doc, err := Render(o)
		if err != nil {
			t.Fatal(err)
		}
		cc := decodeCloudConfig(t, doc)
		if strings.Contains(doc, spotHandlerService) || strings.Contains(file(t, cc, ScriptPath).Content, "provider-id") {
			t.Errorf("%s: has the spot handler or a provider id", name)
		}
	}
}

func TestSpotHandlerBashSyntaxAndCloudInitSchema(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	ci := requireTool(t, "cloud-init", "cloud-init")
	doc, err := Render(spotWorker())
	if err != nil {
		t.Fatal(err)
	}
	cc := decodeCloudConfig(t, doc)
	for _, p := range []string{SpotHandlerScriptPath, ScriptPath} {
		f := filepath.Join(t.TempDir(), "script.sh")
		if err := os.WriteFile(f, []byte(file(t, cc, p).Content), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bash, "-n", f).CombinedOutput(); err != nil {
			t.Fatalf("bash -n %s: %v\n%s", p, err, out)
		}
	}
	cloudInitSchema(t, ci, doc)
}

// fakeKubectl records its arguments and serves the node's pods from a file; an eviction removes
// the pod from it, as the API server would once the pod is gone.
const fakeKubectl = `#!/bin/bash
echo "$*" >> "$STATE/calls"
case "$1" in
  cordon) exit 0 ;;
  get) cat "$STATE/pods" ;;
  create)
    body=$(cat)
    path="$3"; ns=$(echo "$path" | cut -d/ -f5); name=$(echo "$path" | cut -d/ -f7)
    # REFUSE=name:n refuses that pod's first n evictions, as the API server does (429) while a
    # PodDisruptionBudget allows no disruption.
    if [ "${REFUSE%%:*}" = "$name" ] && [ "$(cat "$STATE/refused" 2>/dev/null | wc -l)" -lt "${REFUSE#*:}" ]; then
      echo "$name" >> "$STATE/refused"
      echo "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget." >&2; exit 1
    fi
    echo "$body" >> "$STATE/evictions"
    grep -v "^$ns $name " "$STATE/pods" > "$STATE/pods.new"; mv "$STATE/pods.new" "$STATE/pods" ;;
esac
`

// TestSpotHandlerCordonsAndDrains runs the handler against a fake metadata server and a fake
// kubectl: nothing happens while the notice answers 404; once it answers a time, the node is
// cordoned and every pod but DaemonSet and static ones is evicted.
func TestSpotHandlerCordonsAndDrains(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	requireTool(t, "curl", "curl")
	var notice atomic.Bool
	var tokens atomic.Int32
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			if r.Header.Get("X-aliyun-ecs-metadata-token-ttl-seconds") == "" {
				http.Error(w, "no ttl", http.StatusBadRequest)
				return
			}
			tokens.Add(1)
			_, _ = w.Write([]byte("tok123"))
		case r.Method == http.MethodGet && r.URL.Path == SpotMetadataPath:
			if r.Header.Get("X-aliyun-ecs-metadata-token") != "tok123" {
				http.Error(w, "hardened mode needs the token", http.StatusUnauthorized)
				return
			}
			if !notice.Load() {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte("2026-12-03T10:05:00Z"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer md.Close()

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	state := filepath.Join(dir, "state")
	for _, d := range []string{bin, state} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin, "kubectl"), fakeKubectl, 0o700)
	write(filepath.Join(state, "pods"), strings.Join([]string{
		"gpu-workloads trainer-0 Job <none>",
		"gpu-workloads notebook <none> <none>",
		"gpu-system nvidia-device-plugin-x DaemonSet <none>",
		"kube-system kube-proxy-x DaemonSet <none>",
		"kube-system static-x Node abc123",
		""}, "\n"), 0o600)
	handler := filepath.Join(dir, "handler.sh")
	write(handler, SpotHandlerScript(), 0o700)
	run := func(env ...string) (string, error) {
		cmd := exec.Command(bash, handler)
		cmd.Env = append(os.Environ(), append([]string{"METADATA_URL=" + md.URL, "PATH=" + bin + ":" + os.Getenv("PATH"),
			"STATE=" + state, "NODE_NAME=node-7", "KUBECONFIG=/nonexistent"}, env...)...)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("the handler did not stop:\n%s", out)
		}
		return string(out), err
	}

	if out, err := run("ONCE=1"); err != nil {
		t.Fatalf("no notice: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "calls")); len(b) > 0 {
		t.Fatalf("kubectl was called with no reclaim announced:\n%s", b)
	}
	if tokens.Load() == 0 {
		t.Fatal("the handler asked for no metadata token")
	}

	notice.Store(true)
	out, err := run("INTERVAL=1")
	if err != nil {
		t.Fatalf("with a notice: %v\n%s", err, out)
	}
	callsB, _ := os.ReadFile(filepath.Join(state, "calls"))
	calls := strings.Split(strings.TrimSpace(string(callsB)), "\n")
	if calls[0] != "cordon node-7" {
		t.Errorf("first kubectl call %q, want cordon node-7", calls[0])
	}
	if !slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "--field-selector spec.nodeName=node-7") }) {
		t.Errorf("pods not listed by the node's field selector: %v", calls)
	}
	ev, _ := os.ReadFile(filepath.Join(state, "evictions"))
	evictions := string(ev)
	for _, want := range []string{`"name":"trainer-0","namespace":"gpu-workloads"`, `"name":"notebook","namespace":"gpu-workloads"`} {
		if !strings.Contains(evictions, want) {
			t.Errorf("no eviction %s in:\n%s", want, evictions)
		}
	}
	for _, not := range []string{"nvidia-device-plugin-x", "kube-proxy-x", "static-x"} {
		if strings.Contains(evictions, not) {
			t.Errorf("%s (DaemonSet or static pod) was evicted", not)
		}
	}
	if !strings.Contains(out, "spot reclaim of node-7 announced for 2026-12-03T10:05:00Z") || !strings.Contains(out, "node node-7 drained") {
		t.Errorf("log:\n%s", out)
	}
}
