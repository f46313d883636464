package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sizedControlPlane is a highly available control-plane node of a control plane of size, the
// first one or one that joins.
func sizedControlPlane(join bool, size int) Options {
	o := controlPlane()
	o.Kubernetes.CertificateKey, o.Kubernetes.JoinControlPlane, o.Kubernetes.ControlPlaneSize = strings.Repeat("ab", 32), join, size
	o.Kubernetes.CACertHash = "sha256:" + strings.Repeat("ab", 32)
	return o
}

// renderSized is the cloud-config of sizedControlPlane(join, size).
func renderSized(t *testing.T, join bool, size int) cloudConfig {
	t.Helper()
	doc, err := Render(sizedControlPlane(join, size))
	if err != nil {
		t.Fatal(err)
	}
	return decodeCloudConfig(t, doc)
}

// TestUploadCertsOnlyWhilePending: with control_plane_size, every control-plane node carries the
// upload timer and starts it, and its script, run in bash against a kubectl that lists the
// control-plane Nodes' Ready conditions, uploads the certificates with the node's certificate key
// (from its InitConfiguration or its JoinConfiguration, through a file, not the command line)
// while fewer are Ready than the size, and deletes the kubeadm-certs Secret when the control plane
// is full.
func TestUploadCertsOnlyWhilePending(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	for _, join := range []bool{false, true} {
		cc := renderSized(t, join, 3)
		script := file(t, cc, ScriptPath).Content
		if !strings.Contains(script, "enable --now "+uploadCertsTimer) {
			t.Errorf("join %v: the script does not start %s", join, uploadCertsTimer)
		}
		// systemd learns of the timer's new units (after the join, or in the first node's add-ons
		// phase) before the script enables it.
		start := strings.Index(script, "enable --now "+uploadCertsTimer)
		if before := script[strings.LastIndex(script[:max(start, 0)], "join "+KubeadmPath)+1 : max(start, 0)]; !strings.Contains(before, "systemctl daemon-reload") {
			t.Errorf("join %v: the script starts %s with no systemctl daemon-reload after the join:\n%s", join, uploadCertsTimer, before)
		}
		upload := file(t, cc, UploadCertsScriptPath).Content
		for ready, want := range map[string]string{
			"True\nTrue\n":        "kubeadm init phase upload-certs --upload-certs --config",
			"True\nFalse\nTrue\n": "kubeadm init phase upload-certs --upload-certs --config",
			"True\nTrue\nTrue\n":  "kubectl -n kube-system delete secret kubeadm-certs --ignore-not-found",
		} {
			got, err := runUploadCerts(t, bash, upload, file(t, cc, KubeadmPath).Content, ready)
			if err != nil {
				t.Fatalf("join %v, Ready %q: %v: %s", join, ready, err, got)
			}
			if !strings.Contains(got, want) {
				t.Errorf("join %v, Ready %q: ran\n%s\nwant %q", join, ready, got, want)
			}
			uploads := strings.Contains(want, "upload-certs")
			if strings.Contains(got, "certificateKey: "+strings.Repeat("ab", 32)) != uploads || strings.Contains(got, "delete secret") == uploads {
				t.Errorf("join %v, Ready %q: ran\n%s\nwant the configured key in the upload's configuration only when it uploads", join, ready, got)
			}
		}
	}
}

// runUploadCerts runs the upload script in bash against a kubeadm configuration holding
// kubeadmConf and fake kubectl and kubeadm that log their arguments (and kubeadm the upload's
// configuration), kubectl listing ready as the control-plane Nodes' Ready conditions. It returns
// the log followed by the script's output, and the script's error.
func runUploadCerts(t *testing.T, bash, upload, kubeadmConf, ready string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "kubeadm.yaml")
	if err := os.WriteFile(conf, []byte(kubeadmConf), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "log")
	fake := "#!/bin/bash\necho \"$(basename $0) $*\" >>" + log + "\n"
	kubectl := fake + "[ \"$2\" = nodes ] && printf '" + strings.ReplaceAll(ready, "\n", `\n`) + "'\nexit 0\n"
	kubeadm := fake + "[ \"$4 $5\" = '--upload-certs --config' ] && cat \"$6\" >>" + log + "\n"
	for name, body := range map[string]string{"kubectl": kubectl, "kubeadm": kubeadm} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s := strings.ReplaceAll(strings.ReplaceAll(upload, KubeadmPath, conf), uploadCertsConfig, filepath.Join(dir, "upload.yaml"))
	cmd := exec.Command(bash, "-c", s)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	got, _ := os.ReadFile(log)
	return string(got) + string(out), err
}

// TestUploadCertsRefusesWithoutKey: a kubeadm configuration the script reads no certificate key
// from (edited by hand, or a format the sed does not match) fails the script before kubeadm runs,
// since `kubeadm init phase upload-certs` without a key makes a new one the joining nodes do not
// hold and the joins would fail to decrypt the certificates.
func TestUploadCertsRefusesWithoutKey(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	for _, join := range []bool{false, true} {
		cc := renderSized(t, join, 3)
		conf := file(t, cc, KubeadmPath).Content
		var kept []string
		for _, l := range strings.Split(conf, "\n") {
			if !strings.Contains(l, "certificateKey:") {
				kept = append(kept, l)
			}
		}
		if len(kept) == len(strings.Split(conf, "\n")) {
			t.Fatalf("join %v: no certificateKey line in the rendered %s to remove:\n%s", join, KubeadmPath, conf)
		}
		got, err := runUploadCerts(t, bash, file(t, cc, UploadCertsScriptPath).Content, strings.Join(kept, "\n"), "True\n")
		if err == nil {
			t.Errorf("join %v: the script succeeded without a certificate key; ran\n%s", join, got)
		}
		if strings.Contains(got, "kubeadm ") || !strings.Contains(got, "no certificateKey") {
			t.Errorf("join %v: ran\n%s\nwant no kubeadm call and the missing key named", join, got)
		}
	}
}

// TestControlPlaneSizeRefused: a size etcd cannot keep a quorum with, or one on a worker, is a
// plan error naming the attribute.
func TestControlPlaneSizeRefused(t *testing.T) {
	w := worker()
	w.Kubernetes.ControlPlaneSize = 3
	for _, o := range []Options{sizedControlPlane(false, 2), sizedControlPlane(true, -1), w} {
		if _, err := Render(o); err == nil || !strings.Contains(err.Error(), "kubernetes.control_plane_size") {
			t.Errorf("size %d on %s: %v; want an error naming kubernetes.control_plane_size", o.Kubernetes.ControlPlaneSize, o.Role, err)
		}
	}
	if _, err := Render(sizedControlPlane(false, 3)); err != nil {
		t.Errorf("size 3: %v", err)
	}
}
