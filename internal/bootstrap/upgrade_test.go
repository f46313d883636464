package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

func TestCheckKubernetesUpgrade(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     string // "" = allowed; else words of the reason
	}{
		{"1.30", "1.30.14", ""},
		{"1.29", "1.30", ""},
		{"", "", ""}, // the default both times
		{"1.30", "", "skips 1.31, 1.32 from the nodes' 1.30"},
		{"1.28", "1.30", "skips 1.29 from the nodes' 1.28"},
		{"1.33", "1.30", "kubeadm does not downgrade"},
		{"1.30.2", "1.29.15", "kubeadm does not downgrade"},
	} {
		err := CheckKubernetesUpgrade(Versions{Kubernetes: c.from}, Versions{Kubernetes: c.to})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q -> %q refused: %v", c.from, c.to, err)
		case c.want != "":
			pe, ok := planerr.As(err)
			if !ok || pe.Path != "kubernetes" || !strings.Contains(pe.Why, c.want) || !strings.Contains(pe.Why, VersionSkewPolicy) {
				t.Errorf("%q -> %q = %v, want a refusal on kubernetes saying %q and naming the skew policy", c.from, c.to, err, c.want)
			}
		}
	}
	pe, _ := planerr.As(CheckKubernetesUpgrade(Versions{Kubernetes: "1.28"}, Versions{Kubernetes: "1.30"}))
	if pe == nil || pe.Fix != "apply each minor in turn: 1.29, then 1.30" {
		t.Errorf("fix = %+v, want the minors in turn", pe)
	}
}

// TestKubeadmUpgradeScript: the script installs exactly the release's kubeadm from the new
// minor's repository (the mirror's when the nodes use it), upgrades to the same release, and
// leaves a cluster already there alone; a version the nodes could not install is refused.
func TestKubeadmUpgradeScript(t *testing.T) {
	s, err := KubeadmUpgradeScript(Options{Versions: Versions{Kubernetes: "1.34.2"}, PackageMirror: MirrorInternet})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"target=v1.34.2\n", "https://pkgs.k8s.io/core:/stable:/v1.34/deb/ /' > /etc/apt/sources.list.d/kubernetes.list",
		"kubeadm=1.34.2-1.1\n", `kubeadm upgrade apply "$target" --yes`, `if [ "$current" = "$target" ]; then echo "cluster already at $target"; exit 0; fi`, "set -eu"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	m, err := KubeadmUpgradeScript(Options{Versions: Versions{Kubernetes: "1.33"}, PackageMirror: MirrorAlibabaVPC})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m, "kubernetes-new/core/stable/v1.33/deb/") || !strings.Contains(m, "target=v1.33.6\n") {
		t.Errorf("mirror script does not use the mirror's v1.33 repository and the pinned release:\n%s", m)
	}
	if _, err := KubeadmUpgradeScript(Options{Versions: Versions{Kubernetes: "1.31"}}); err == nil {
		t.Error("a minor without a pinned release was accepted")
	}
}

// TestKubeadmUpgradeScriptRuns runs the script in sh with kubectl answering the kubeadm-config
// ConfigMap's ClusterConfiguration as the API returns it, and apt-get, apt-mark and kubeadm
// recording their calls (the repository file goes to a temporary directory): a cluster at the
// old release is upgraded with the release's kubeadm; one already there is left alone.
func TestKubeadmUpgradeScriptRuns(t *testing.T) {
	sh := requireTool(t, "sh", "dash")
	s, err := KubeadmUpgradeScript(Options{Versions: Versions{Kubernetes: "1.33"}, PackageMirror: MirrorInternet})
	if err != nil {
		t.Fatal(err)
	}
	run := func(clusterVersion string) (out, calls, repo string) {
		dir := t.TempDir()
		log := filepath.Join(dir, "log")
		fakes := map[string]string{
			"kubectl": "printf 'apiServer: {}\\napiVersion: kubeadm.k8s.io/v1beta4\\nkind: ClusterConfiguration\\nkubernetesVersion: " + clusterVersion + "\\nnetworking:\\n  podSubnet: 10.244.0.0/16\\n'\n",
			"apt-get": "", "apt-mark": "", "kubeadm": "",
		}
		for name, body := range fakes {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho \""+name+" $*\" >>"+log+"\n"+body), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		script := strings.ReplaceAll(s, "/etc/apt/sources.list.d/", dir+"/")
		cmd := exec.Command(sh, "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the script failed: %v\n%s", err, b)
		}
		c, _ := os.ReadFile(log)
		r, _ := os.ReadFile(filepath.Join(dir, "kubernetes.list"))
		return string(b), string(c), string(r)
	}
	out, calls, repo := run("v1.32.9")
	for _, want := range []string{"apt-get install -y --allow-change-held-packages kubeadm=1.33.6-1.1", "kubeadm upgrade apply v1.33.6 --yes"} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls lack %q:\n%s", want, calls)
		}
	}
	if !strings.Contains(repo, "/v1.33/deb/") || !strings.Contains(out, "cluster upgraded from v1.32.9 to v1.33.6") {
		t.Errorf("repository %q, output %q", repo, out)
	}
	out, calls, _ = run("v1.33.6")
	if strings.Contains(calls, "kubeadm upgrade") || strings.Contains(calls, "apt-get") || !strings.Contains(out, "cluster already at v1.33.6") {
		t.Errorf("a cluster already at the release: calls %q, output %q", calls, out)
	}
}
