package bootstrap

import (
	"encoding/base64"
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
			if !strings.Contains(svc, "ExecStart="+CertsScriptPath+" renew\n") || !strings.Contains(timer, "OnCalendar=daily") || !strings.Contains(timer, "Persistent=true") {
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

// certFixture is a node's kubeadm directory under a temporary directory, with certificates
// openssl makes.
type certFixture struct {
	t                           *testing.T
	openssl, dir, kube, kubelet string
}

func newCertFixture(t *testing.T) certFixture {
	t.Helper()
	f := certFixture{t: t, openssl: testtools.Require(t, "openssl", "openssl"), dir: t.TempDir()}
	f.kube, f.kubelet = filepath.Join(f.dir, "kubernetes"), filepath.Join(f.dir, "kubelet-client-current.pem")
	if err := os.MkdirAll(filepath.Join(f.kube, "pki", "etcd"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// cert writes a certificate valid for days at path and answers its notAfter in Unix seconds,
// read back with openssl independently of the script.
func (f certFixture) cert(path string, days int) int64 {
	f.t.Helper()
	cmd := exec.Command(f.openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
		"-keyout", filepath.Join(f.dir, "key.pem"), "-out", path, "-subj", "/CN=test", "-days", fmt.Sprint(days))
	if b, err := cmd.CombinedOutput(); err != nil {
		f.t.Fatalf("openssl: %v\n%s", err, b)
	}
	b, err := exec.Command(f.openssl, "x509", "-noout", "-enddate", "-dateopt", "iso_8601", "-in", path).Output()
	if err != nil {
		f.t.Fatal(err)
	}
	end, err := time.Parse("2006-01-02 15:04:05Z", strings.TrimSpace(strings.TrimPrefix(string(b), "notAfter=")))
	if err != nil {
		f.t.Fatal(err)
	}
	return end.Unix()
}

// pki writes a certificate of the kubeadm PKI (name as kubeadm names its file, "etcd/server").
func (f certFixture) pki(name string, days int) int64 {
	return f.cert(filepath.Join(f.kube, "pki", name+".crt"), days)
}

// kubeconfig writes a kubeconfig file of the kubeadm directory whose client certificate is
// embedded, as kubeadm writes admin.conf.
func (f certFixture) kubeconfig(name string, days int) int64 {
	f.t.Helper()
	pem := filepath.Join(f.dir, name+".pem")
	end := f.cert(pem, days)
	b, err := os.ReadFile(pem)
	if err != nil {
		f.t.Fatal(err)
	}
	conf := "apiVersion: v1\nkind: Config\nusers:\n- name: kubernetes-admin\n  user:\n    client-certificate-data: " +
		base64.StdEncoding.EncodeToString(b) + "\n    client-key-data: c2VjcmV0\n"
	if err := os.WriteFile(filepath.Join(f.kube, name), []byte(conf), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return end
}

// run runs the script under bash with args, the PATH given first, and answers the metric it
// wrote by certificate name.
func (f certFixture) run(path string, args ...string) (map[string]int64, string) {
	f.t.Helper()
	bash := testtools.Require(f.t, "bash", "bash")
	out := filepath.Join(f.dir, "textfile")
	script := filepath.Join(f.dir, "certs.sh")
	if err := os.WriteFile(script, []byte(certsScript), 0o700); err != nil {
		f.t.Fatal(err)
	}
	cmd := exec.Command(bash, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "KUBE_DIR="+f.kube, "KUBELET_CERT="+f.kubelet, "OUT="+out, "ROOT_KUBECONFIG="+filepath.Join(f.dir, "root-kubeconfig"))
	if path != "" {
		cmd.Env = append(cmd.Env, "PATH="+path+":"+os.Getenv("PATH"))
	}
	log, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("script: %v\n%s", err, log)
	}
	b, err := os.ReadFile(filepath.Join(out, "certs.prom"))
	if err != nil {
		f.t.Fatal(err)
	}
	got := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		var name string
		var ts int64
		if _, err := fmt.Sscanf(strings.Replace(line, alerting.MetricCertificateExpiry+`{certificate="`, "", 1), `%s %d`, &name, &ts); err != nil || !strings.HasPrefix(line, alerting.MetricCertificateExpiry+"{") {
			f.t.Fatalf("line %q is not %s{certificate=\"...\"} <seconds>", line, alerting.MetricCertificateExpiry)
		}
		got[strings.TrimSuffix(name, `"}`)] = ts
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		f.t.Errorf("the textfile directory holds %d files, want certs.prom alone (no temporary left)", len(entries))
	}
	return got, string(log)
}

// TestCertsScriptWritesExpiry runs the certificate script under bash against a temporary PKI with
// certificates openssl makes, valid for a day and for two: each appears with its notAfter in
// Unix seconds, named as kubeadm names it, the kubeconfig files' embedded client certificates by
// their file's name, and the kubelet's as kubelet-client.
func TestCertsScriptWritesExpiry(t *testing.T) {
	f := newCertFixture(t)
	want := map[string]int64{
		"apiserver":      f.pki("apiserver", 1),
		"etcd-server":    f.pki("etcd/server", 2),
		"admin.conf":     f.kubeconfig("admin.conf", 3),
		"kubelet-client": f.cert(f.kubelet, 1),
	}
	if err := os.WriteFile(filepath.Join(f.kube, "pki", "broken.crt"), []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.kube, "kubelet.conf"), []byte("users:\n- user:\n    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := f.run("")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read %v, want %v (the broken file and kubelet.conf's certificate path left out)", got, want)
	}
}

// TestCertsScriptRenewsWhenDue runs the script with "renew" against fake kubeadm and crictl that
// log their arguments: it renews and restarts the control-plane containers only when a
// certificate kubeadm renews has under CertRenewBefore left, never for a CA or the kubelet's
// own certificate, which kubeadm certs renew does not renew.
func TestCertsScriptRenewsWhenDue(t *testing.T) {
	days := int(CertRenewBefore.Hours() / 24)
	for _, tc := range []struct {
		name  string
		make  func(f certFixture)
		renew bool
	}{
		{"apiserver due", func(f certFixture) { f.pki("apiserver", days-1) }, true},
		{"etcd peer due", func(f certFixture) { f.pki("etcd/peer", days-1) }, true},
		{"admin.conf due", func(f certFixture) { f.kubeconfig("admin.conf", days-1) }, true},
		{"none due", func(f certFixture) { f.pki("apiserver", days+1) }, false},
		{"only CAs and the kubelet's due", func(f certFixture) {
			f.pki("ca", 10)
			f.pki("front-proxy-ca", 10)
			f.pki("etcd/ca", 10)
			f.cert(f.kubelet, 10)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCertFixture(t)
			f.pki("apiserver-kubelet-client", 365)
			f.kubeconfig("admin.conf", 365)
			tc.make(f)
			bin := filepath.Join(f.dir, "bin")
			calls := filepath.Join(f.dir, "calls")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{
				"kubeadm": `echo "kubeadm $*" >>` + calls,
				// ps answers two container ids, stop logs them.
				"crictl": `echo "crictl $* $CONTAINER_RUNTIME_ENDPOINT" >>` + calls + `; [ "$1" = ps ] && printf 'c1\nc2\n'; true`,
			} {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, log := f.run(bin, "renew")
			b, _ := os.ReadFile(calls)
			want := ""
			if tc.renew {
				want = "kubeadm certs renew all\ncrictl ps -q --name ^(kube-apiserver|kube-controller-manager|kube-scheduler|etcd)$ " + criSocket +
					"\ncrictl stop c1 c2 " + criSocket + "\n"
			}
			if string(b) != want {
				t.Errorf("calls:\n%s\nwant:\n%s\nlog: %s", b, want, log)
			}
			if _, err := os.Stat(filepath.Join(f.dir, "root-kubeconfig")); (err == nil) != tc.renew {
				t.Errorf("root's kubeconfig copied: %v, want %v", err == nil, tc.renew)
			}
		})
	}
}
