package bootstrap

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runDrainScript runs DrainScript(node-3, timeout) in bash against fakeKubectl serving pods, with
// env added; it answers the exit code, the output, kubectl's calls and the evictions' bodies.
func runDrainScript(t *testing.T, timeout time.Duration, pods []string, env ...string) (code int, out, calls, evictions string) {
	t.Helper()
	bash := requireTool(t, "bash", "bash")
	dir := t.TempDir()
	bin, state := filepath.Join(dir, "bin"), filepath.Join(dir, "state")
	kubeconfig := filepath.Join(dir, "kubelet.conf")
	for _, d := range []string{bin, state} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	script, err := DrainScript("node-3", timeout)
	if err != nil {
		t.Fatal(err)
	}
	script = strings.Replace(script, "KUBECONFIG=/etc/kubernetes/kubelet.conf", "KUBECONFIG="+kubeconfig, 1)
	for p, content := range map[string]string{filepath.Join(bin, "kubectl"): fakeKubectl, filepath.Join(state, "pods"): strings.Join(pods, "\n") + "\n",
		filepath.Join(dir, "drain.sh"): script, kubeconfig: "apiVersion: v1\nkind: Config\n"} {
		if err := os.WriteFile(p, []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, filepath.Join(dir, "drain.sh"))
	cmd.Env = append(os.Environ(), append([]string{"PATH=" + bin + ":" + os.Getenv("PATH"), "STATE=" + state}, env...)...)
	b, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	c, _ := os.ReadFile(filepath.Join(state, "calls"))
	e, _ := os.ReadFile(filepath.Join(state, "evictions"))
	return code, string(b), string(c), string(e)
}

var drainPods = []string{
	"default steady-abc ReplicaSet <none>",
	"gpu-workloads trainer-0 Job <none>",
	"gpu-system nvidia-device-plugin-x DaemonSet <none>",
	"kube-system static-x Node abc123",
}

// TestDrainScriptEvictsThroughTheAPI: the script cordons the node, evicts each pod but DaemonSet
// and static ones through the Eviction API with the pod's own grace period, and tries an eviction
// the API refused (429, a PodDisruptionBudget) again a round later until it is accepted.
func TestDrainScriptEvictsThroughTheAPI(t *testing.T) {
	code, out, calls, evictions := runDrainScript(t, 2*DrainInterval, drainPods, "REFUSE=steady-abc:1")
	if code != 0 || !strings.Contains(out, "node node-3 drained") {
		t.Fatalf("exit %d, want 0 and drained:\n%s", code, out)
	}
	if first := strings.SplitN(calls, "\n", 2)[0]; first != "cordon node-3" {
		t.Errorf("first kubectl call %q, want cordon node-3", first)
	}
	if !strings.Contains(calls, "--field-selector spec.nodeName=node-3") {
		t.Errorf("pods not listed by the node's field selector:\n%s", calls)
	}
	for _, want := range []string{"/api/v1/namespaces/default/pods/steady-abc/eviction", "/api/v1/namespaces/gpu-workloads/pods/trainer-0/eviction"} {
		if !strings.Contains(calls, want) {
			t.Errorf("no eviction at %s:\n%s", want, calls)
		}
	}
	if strings.Count(calls, "pods/steady-abc/eviction") != 2 {
		t.Errorf("the refused eviction was not tried again once:\n%s", calls)
	}
	for _, not := range []string{"nvidia-device-plugin-x", "static-x"} {
		if strings.Contains(calls, not) {
			t.Errorf("%s evicted:\n%s", not, calls)
		}
	}
	if strings.Contains(evictions, "gracePeriodSeconds") || !strings.Contains(evictions, `"kind":"Eviction"`) {
		t.Errorf("evictions %s: want policy/v1 Evictions with the pods' own grace periods", evictions)
	}
}

// TestDrainScriptNamesWhatABudgetKept: evictions refused in every round end the script with
// DrainExitPodsLeft naming the pod, the node uncordoned (it stays in service).
func TestDrainScriptNamesWhatABudgetKept(t *testing.T) {
	code, out, calls, _ := runDrainScript(t, DrainInterval, drainPods, "REFUSE=steady-abc:100")
	if code != DrainExitPodsLeft || !strings.Contains(out, "pods left after 1 rounds: default/steady-abc") {
		t.Fatalf("exit %d, want %d naming default/steady-abc:\n%s", code, DrainExitPodsLeft, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(calls), "uncordon node-3") {
		t.Errorf("the node kept by a budget was not uncordoned last:\n%s", calls)
	}
	script, err := DrainScript("node-3", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(script, "ROUNDS=12\n") || !strings.Contains(script, "\n"+DrainScriptMarker) {
		t.Errorf("a minute is not 12 rounds, or no marker:\n%s", script)
	}
	if _, err := DrainScript("Node 3; rm -rf /", time.Minute); err == nil {
		t.Error("a name that is not a node's was rendered into a root script")
	}
}
