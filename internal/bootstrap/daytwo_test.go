package bootstrap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// kubeletDoc finds the KubeletConfiguration among the documents of a file, strictly decoded.
func kubeletDoc(t *testing.T, content string) (kubeletConfiguration, bool) {
	t.Helper()
	for _, part := range strings.Split(content, "---\n") {
		var meta kubeadmMeta
		if err := yaml.Unmarshal([]byte(part), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind != "KubeletConfiguration" {
			continue
		}
		var kc kubeletConfiguration
		if err := yaml.UnmarshalStrict([]byte(part), &kc); err != nil {
			t.Fatalf("KubeletConfiguration: %v", err)
		}
		return kc, true
	}
	return kubeletConfiguration{}, false
}

func checkKubeletDoc(t *testing.T, where string, kc kubeletConfiguration) {
	t.Helper()
	if kc.APIVersion != "kubelet.config.k8s.io/v1beta1" || !kc.RotateCertificates || kc.ShutdownGracePeriod != "5m0s" || kc.ShutdownGracePeriodCriticalPods != "1m0s" {
		t.Errorf("%s: KubeletConfiguration %+v, want kubelet.config.k8s.io/v1beta1, rotateCertificates, shutdown 5m0s / critical 1m0s", where, kc)
	}
}

// TestDayTwoControlPlaneAndWorker: the first control-plane node carries the cluster's
// KubeletConfiguration beside kubeadm init's documents; a worker, whose join ignores such a
// document, carries the same fields as a kubeletconfiguration patch its JoinConfiguration names.
// Both write the certificate script and the expiry timer and start it after joining; only the
// control plane renews.
func TestDayTwoControlPlaneAndWorker(t *testing.T) {
	cp, err := Render(controlPlane())
	if err != nil {
		t.Fatal(err)
	}
	cpc := decodeCloudConfig(t, cp)
	kc, ok := kubeletDoc(t, file(t, cpc, KubeadmPath).Content)
	if !ok {
		t.Fatalf("the first control-plane node's kubeadm configuration has no KubeletConfiguration")
	}
	checkKubeletDoc(t, "control plane", kc)

	w, err := Render(worker())
	if err != nil {
		t.Fatal(err)
	}
	wc := decodeCloudConfig(t, w)
	join := file(t, wc, KubeadmPath).Content
	if _, ok := kubeletDoc(t, join); ok {
		t.Errorf("the worker's JoinConfiguration file has a KubeletConfiguration, which kubeadm join ignores")
	}
	var jc joinConfiguration
	if err := yaml.UnmarshalStrict([]byte(join), &jc); err != nil {
		t.Fatal(err)
	}
	patch := file(t, wc, KubeletPatchPath)
	if jc.Patches == nil || jc.Patches.Directory != filepath.Dir(KubeletPatchPath) || !strings.HasPrefix(filepath.Base(KubeletPatchPath), "kubeletconfiguration") {
		t.Errorf("JoinConfiguration patches = %+v, want the directory of %s", jc.Patches, KubeletPatchPath)
	}
	kc, ok = kubeletDoc(t, patch.Content)
	if !ok {
		t.Fatalf("the kubelet patch is not a KubeletConfiguration:\n%s", patch.Content)
	}
	checkKubeletDoc(t, "worker patch", kc)

	for _, c := range []struct {
		name     string
		cc       cloudConfig
		renew    bool
		timersIn string // the phase that starts the timers
	}{{"control plane", cpc, true, PhaseAddons}, {"worker", wc, false, PhaseJoin}} {
		if s := file(t, c.cc, CertsScriptPath); s.Permissions != "0700" || !strings.Contains(s.Content, "kubeadm certs renew all") {
			t.Errorf("%s: certificate script %s:\n%s", c.name, s.Permissions, s.Content)
		}
		svc := file(t, c.cc, systemdDir+certExpiryUnit+".service").Content
		timer := file(t, c.cc, systemdDir+certExpiryUnit+".timer").Content
		if !strings.Contains(svc, "ExecStart="+CertsScriptPath+"\n") || !strings.Contains(timer, "OnUnitActiveSec=1h") || !strings.Contains(timer, "WantedBy=timers.target") {
			t.Errorf("%s: expiry units:\n%s\n%s", c.name, svc, timer)
		}
		hasRenew := false
		for _, f := range c.cc.WriteFiles {
			hasRenew = hasRenew || f.Path == systemdDir+certRenewUnit+".timer"
		}
		if hasRenew != c.renew {
			t.Errorf("%s: renewal timer written %v, want %v", c.name, hasRenew, c.renew)
		}
		if c.renew {
			svc := file(t, c.cc, systemdDir+certRenewUnit+".service").Content
			timer := file(t, c.cc, systemdDir+certRenewUnit+".timer").Content
			if !strings.Contains(svc, "ExecStart="+CertsScriptPath+" renew\n") || !strings.Contains(timer, "OnCalendar=monthly") || !strings.Contains(timer, "Persistent=true") {
				t.Errorf("%s: renewal units:\n%s\n%s", c.name, svc, timer)
			}
		}
		script := file(t, c.cc, ScriptPath).Content
		body := phaseBody(script, c.timersIn)
		want := "systemctl enable --now " + certExpiryUnit + ".timer"
		if c.renew {
			want += " " + certRenewUnit + ".timer"
		}
		if !strings.Contains(body, want) {
			t.Errorf("%s: phase %s does not run %q:\n%s", c.name, c.timersIn, want, body)
		}
		for _, p := range installPhases {
			if b := phaseBody(script, p); strings.Contains(b, "gpucluster-cert") || strings.Contains(b, "kubelet.config") {
				t.Errorf("%s: install phase %s mentions certificates: baked images would differ", c.name, p)
			}
		}
	}
}

// TestDayTwoKubeletPatchNeedsKubeadm125: kubeadm reads kubeletconfiguration patches from 1.25.
func TestDayTwoKubeletPatchNeedsKubeadm125(t *testing.T) {
	o := worker()
	o.Versions.Kubernetes = "1.24.17"
	doc, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	cc := decodeCloudConfig(t, doc)
	for _, f := range cc.WriteFiles {
		if f.Path == KubeletPatchPath {
			t.Errorf("a 1.24 worker writes %s, which its kubeadm does not read", KubeletPatchPath)
		}
	}
	if strings.Contains(file(t, cc, KubeadmPath).Content, "patches") {
		t.Errorf("a 1.24 worker's JoinConfiguration names a patches directory")
	}
}

// TestCertsScriptWritesExpiry runs the certificate script under bash against a temporary PKI with
// certificates openssl makes, valid for a day and for two: each appears with its notAfter in
// Unix seconds, named as kubeadm names it, and the kubelet's as kubelet-client.
func TestCertsScriptWritesExpiry(t *testing.T) {
	bash := testtools.Require(t, "bash", "bash")
	openssl := testtools.Require(t, "openssl", "openssl")
	dir := t.TempDir()
	pki, out := filepath.Join(dir, "pki"), filepath.Join(dir, "textfile")
	if err := os.MkdirAll(filepath.Join(pki, "etcd"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkcert := func(path string, days int) int64 {
		t.Helper()
		cmd := exec.Command(openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
			"-keyout", filepath.Join(dir, "key.pem"), "-out", path, "-subj", "/CN=test", "-days", fmt.Sprint(days))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl: %v\n%s", err, b)
		}
		// The notAfter openssl wrote, read back independently of the script.
		b, err := exec.Command(openssl, "x509", "-noout", "-enddate", "-dateopt", "iso_8601", "-in", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		end, err := time.Parse("2006-01-02 15:04:05Z", strings.TrimSpace(strings.TrimPrefix(string(b), "notAfter=")))
		if err != nil {
			t.Fatal(err)
		}
		return end.Unix()
	}
	want := map[string]int64{
		"apiserver":      mkcert(filepath.Join(pki, "apiserver.crt"), 1),
		"etcd-server":    mkcert(filepath.Join(pki, "etcd", "server.crt"), 2),
		"kubelet-client": mkcert(filepath.Join(dir, "kubelet-client-current.pem"), 1),
	}
	if err := os.WriteFile(filepath.Join(pki, "broken.crt"), []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "certs.sh")
	if err := os.WriteFile(script, []byte(certsScript), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, script)
	cmd.Env = append(os.Environ(), "PKI="+pki, "KUBELET_CERT="+filepath.Join(dir, "kubelet-client-current.pem"), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(out, "certs.prom"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		var name string
		var ts int64
		if _, err := fmt.Sscanf(strings.Replace(line, alerting.MetricCertificateExpiry+`{certificate="`, "", 1), `%s %d`, &name, &ts); err != nil || !strings.HasPrefix(line, alerting.MetricCertificateExpiry+"{") {
			t.Fatalf("line %q is not %s{certificate=\"...\"} <seconds>", line, alerting.MetricCertificateExpiry)
		}
		got[strings.TrimSuffix(name, `"}`)] = ts
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metric:\n%s\nread %v, want %v (the broken file left out)", b, got, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("the textfile directory holds %d files, want certs.prom alone (no temporary left)", len(entries))
	}
}
