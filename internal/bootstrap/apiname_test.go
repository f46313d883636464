package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	testAPIName = "api.lb-2ze7o5h8x9k1.gpucluster.internal"
	testLB      = "10.0.0.200"
)

// named gives o the API server name in front of the load balancer testLB.
func named(o Options) Options {
	o.Kubernetes.APIEndpoint, o.Kubernetes.APIServerName = testLB+":6443", testAPIName
	return o
}

// haFirst is the first node of a highly available control plane behind the load balancer.
func haFirst() Options {
	o := named(controlPlane())
	o.Kubernetes.CertificateKey, o.Kubernetes.CACertHash = strings.Repeat("0a", 32), "sha256:"+strings.Repeat("ab", 32)
	return o
}

// lineIndex is the index of the first script line containing s, -1 when none does.
func lineIndex(lines []string, s string) int {
	return slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, s) })
}

// kubeadmYAML reads the kubeadm documents of a file into generic maps.
func kubeadmYAML(t *testing.T, content string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, part := range strings.Split(content, "---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(part), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestAPIServerNameInKubeadm(t *testing.T) {
	files := renderFiles(t, haFirst())
	docs := kubeadmYAML(t, files[KubeadmPath])
	cluster := docs[1]
	if cluster["controlPlaneEndpoint"] != testAPIName+":6443" {
		t.Errorf("controlPlaneEndpoint = %v, want the name", cluster["controlPlaneEndpoint"])
	}
	sans, _ := cluster["apiServer"].(map[string]any)["certSANs"].([]any)
	if !slices.Equal(sans, []any{testAPIName, testLB}) {
		t.Errorf("apiServer.certSANs = %v, want the name and the load balancer's address", sans)
	}
	rejoin := kubeadmYAML(t, files[KubeadmJoinPath])[0]
	if got := rejoin["discovery"].(map[string]any)["bootstrapToken"].(map[string]any)["apiServerEndpoint"]; got != testAPIName+":6443" {
		t.Errorf("the replacement join's apiServerEndpoint = %v, want the name", got)
	}
	for _, o := range []Options{named(worker()), joiner()} {
		j := kubeadmYAML(t, renderFiles(t, o)[KubeadmPath])[0]
		if got := j["discovery"].(map[string]any)["bootstrapToken"].(map[string]any)["apiServerEndpoint"]; got != testAPIName+":6443" {
			t.Errorf("%s join's apiServerEndpoint = %v, want the name", o.Role, got)
		}
	}
	// Without a name nothing changes: the address, no extra SANs, no hosts entry.
	plain := renderFiles(t, controlPlane())
	if c := kubeadmYAML(t, plain[KubeadmPath])[1]; c["controlPlaneEndpoint"] != "10.0.0.10:6443" || c["apiServer"] != nil {
		t.Errorf("without a name: %v", c)
	}
	if _, ok := plain[APIHostsPath]; ok {
		t.Error("a node without a name writes the hosts script")
	}
}

// joiner is a control-plane node that joins the first one through the name.
func joiner() Options {
	o := haFirst()
	o.Kubernetes.JoinControlPlane, o.Kubernetes.PodSubnet = true, ""
	return o
}

// TestAPIServerNameMappedAroundKubeadm: the name goes to the load balancer before anything
// reaches the API, and to the node itself once it serves: before kubeadm init, after kubeadm join.
func TestAPIServerNameMappedAroundKubeadm(t *testing.T) {
	lb, self := APIHostsPath+" "+APIHostsModeLB, APIHostsPath+" "+APIHostsModeSelf
	first := strings.Split(phaseBody(renderFiles(t, haFirst())[ScriptPath], PhaseInit), "\n")
	check := lineIndex(first, "/livez' >/dev/null; then")
	if i := lineIndex(first, lb); i < 0 || i > check || lineIndex(first, "systemctl enable "+apiHostsUnit) > i {
		t.Errorf("first node: the name is not mapped to the load balancer (unit enabled first) before the check for a running cluster:\n%s", strings.Join(first, "\n"))
	}
	initAt := lineIndex(first, "kubeadm init --config")
	if i := lineIndex(first[check:], self); i < 0 || check+i > initAt {
		t.Errorf("first node: the name is not mapped to itself before kubeadm init")
	}
	if i := lineIndex(first[initAt:], self); i < 0 || initAt+i > lineIndex(first, "install -m 0600 /etc/kubernetes/admin.conf") {
		t.Errorf("first node: the name is not mapped to itself after init or the replacement join")
	}
	single := named(controlPlane())
	lines := strings.Split(phaseBody(renderFiles(t, single)[ScriptPath], PhaseInit), "\n")
	if i := lineIndex(lines, self); i < 0 || i > lineIndex(lines, "kubeadm init --config") {
		t.Errorf("single control-plane node behind the load balancer: not mapped to itself before kubeadm init:\n%s", strings.Join(lines, "\n"))
	}
	for _, o := range []Options{joiner(), named(worker())} {
		lines := strings.Split(phaseBody(renderFiles(t, o)[ScriptPath], PhaseJoin), "\n")
		joinAt := lineIndex(lines, "join "+KubeadmPath)
		if i := lineIndex(lines, lb); i < 0 || i > lineIndex(lines, "wait_for_api()") {
			t.Errorf("%s: the name is not mapped to the load balancer before the join", o.Role)
		}
		selfAt := lineIndex(lines, self)
		if o.Role == RoleControlPlane && (selfAt < joinAt || selfAt > lineIndex(lines, "admin.conf")) {
			t.Errorf("control-plane join: the name is not mapped to itself after kubeadm join:\n%s", strings.Join(lines, "\n"))
		}
		if o.Role == RoleGPUWorker && selfAt >= 0 {
			t.Errorf("a worker maps the name to itself")
		}
	}
}

// TestAPIHostsScript runs the hosts script: each mode writes exactly one line for the name and
// keeps the others; boot picks self once the API server's manifest exists.
func TestAPIHostsScript(t *testing.T) {
	sh := requireTool(t, "sh", "dash")
	dir := t.TempDir()
	write := func(p, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	script := renderFiles(t, joiner())[APIHostsPath]
	write(filepath.Join(dir, "api-hosts"), script, 0o700)
	// ip -4 route get <lb> as iproute2 prints it on the node.
	write(filepath.Join(dir, "ip"), "#!/bin/sh\necho \"$4 via 10.0.0.253 dev eth0 src 10.0.0.11 uid 0\"\n", 0o700)
	hosts, manifest := filepath.Join(dir, "hosts"), filepath.Join(dir, "kube-apiserver.yaml")
	write(hosts, "127.0.0.1 localhost\n10.0.0.11 iZnode\n9.9.9.9 "+testAPIName+"\n", 0o600)
	run := func(mode string) string {
		t.Helper()
		cmd := exec.Command(sh, filepath.Join(dir, "api-hosts"), mode)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "GPUCLUSTER_HOSTS="+hosts, "GPUCLUSTER_APISERVER_MANIFEST="+manifest)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		b, _ := os.ReadFile(hosts)
		return string(b)
	}
	keep := "127.0.0.1 localhost\n10.0.0.11 iZnode\n"
	for _, c := range []struct{ mode, want string }{
		{APIHostsModeLB, testLB}, {APIHostsModeSelf, "10.0.0.11"}, {APIHostsModeLB, testLB}, {APIHostsModeBoot, testLB},
	} {
		if got, want := run(c.mode), keep+c.want+" "+testAPIName+"\n"; got != want {
			t.Errorf("%s: hosts =\n%s\nwant\n%s", c.mode, got, want)
		}
	}
	write(manifest, "kind: Pod\n", 0o600)
	if got := run(APIHostsModeBoot); got != keep+"10.0.0.11 "+testAPIName+"\n" {
		t.Errorf("boot with the API server's manifest: hosts =\n%s", got)
	}
}

func TestAPIServerNameValidation(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*Options)
		field  string
	}{
		{"upper case", func(o *Options) { o.Kubernetes.APIServerName = "API.example.internal" }, "kubernetes.api_server_name"},
		{"one label", func(o *Options) { o.Kubernetes.APIServerName = "api" }, "kubernetes.api_server_name"},
		{"an address", func(o *Options) { o.Kubernetes.APIServerName = "10.0.0.200" }, "kubernetes.api_server_name"},
		{"endpoint is a name", func(o *Options) { o.Kubernetes.APIEndpoint = "k8s.example.org:6443" }, "kubernetes.api_endpoint"},
	} {
		o := named(worker())
		c.change(&o)
		_, err := Validate(o)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: Validate() = %v, want an error on %s", c.name, err, c.field)
		}
	}
	if _, err := Validate(named(worker())); err != nil {
		t.Errorf("a named worker: %v", err)
	}
	if got := APIServerNameFor("lb-2ZE7o5h8x9k1"); got != testAPIName {
		t.Errorf("APIServerNameFor = %q, want %q", got, testAPIName)
	}
}
