package bundle_test

import (
	"encoding/base64"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
)

const testToken = "abcdef.0123456789abcdef"

// firstControlPlane renders the document of a cluster's first control-plane node, the one with
// the most secrets: the CA key, the join token and an add-on. It answers the document and the CA
// key's PEM.
func firstControlPlane(t *testing.T) (doc, caKey string) {
	t.Helper()
	m, err := clusterca.Generate(clusterca.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := clusterca.SelfSign(m.Key, 24*time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := m.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	id := bootstrap.NodeIdentity{Role: bootstrap.RoleControlPlane}
	doc, err = bootstrap.Render(bootstrap.Options{Role: bootstrap.RoleControlPlane, Region: "cn-wulanchabu", Kubernetes: bootstrap.Kubernetes{
		APIEndpoint: "10.0.0.10:6443", JoinToken: testToken, PodSubnet: "10.244.0.0/16", CACertPEM: certPEM, CAKeyPEM: keyPEM,
		Addons: map[string]string{"20-example.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n"},
		Labels: id.Labels(), Taints: id.Taints()}})
	if err != nil {
		t.Fatal(err)
	}
	return doc, keyPEM
}

func gpuWorker(t *testing.T) string {
	t.Helper()
	id := bootstrap.NodeIdentity{Role: bootstrap.RoleGPUWorker, GPU: true, GPUProduct: "A100-SXM4-80GB"}
	doc, err := bootstrap.Render(bootstrap.Options{Role: bootstrap.RoleGPUWorker, Region: "cn-wulanchabu", ERDMA: true,
		SpotInterruptionHandler: true, Kubernetes: bootstrap.Kubernetes{APIEndpoint: "10.0.0.10:6443", JoinToken: testToken,
			CACertHash: "sha256:" + strings.Repeat("ab", 32), Labels: id.Labels(), Taints: id.Taints(),
			ImageRegistry: "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"}})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// A bundle holds exactly the files cloud-init writes from today's document: the node agent's
// reading of the same user data (its own decoder of write_files) finds the same paths and the
// same bytes, packed or not, and the modes are the document's (cloud-init's 0644 where it says
// none). Packed and unpacked, nothing changes.
func TestFromCloudInitMatchesWriteFiles(t *testing.T) {
	cp, caKey := firstControlPlane(t)
	for name, doc := range map[string]string{"first control plane": cp, "gpu worker": gpuWorker(t)} {
		t.Run(name, func(t *testing.T) {
			files, err := bundle.FromCloudInit(doc)
			if err != nil {
				t.Fatal(err)
			}
			ci, err := nodeagent.DecodeUserData(base64.StdEncoding.EncodeToString([]byte(doc)))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != len(ci.Files) {
				t.Fatalf("%d files, cloud-init writes %d", len(files), len(ci.Files))
			}
			for p, content := range ci.Files {
				if string(files[p].Content) != content {
					t.Errorf("%s: content differs from what cloud-init writes", p)
				}
			}
			for p, mode := range map[string]fs.FileMode{bootstrap.ScriptPath: 0o700, bootstrap.KubeadmPath: 0o600,
				"/etc/systemd/system/" + bootstrap.BootstrapUnit: 0o644} {
				if f, ok := files[p]; !ok || f.Mode != mode {
					t.Errorf("%s: %v (present %v), want mode %v", p, f.Mode, ok, mode)
				}
			}
			packed, err := bundle.FromCloudInit(bootstrap.PackUserData(doc))
			if err != nil {
				t.Fatal(err)
			}
			equalFiles(t, packed, files)
			archive, digest, err := bundle.Pack(files)
			if err != nil {
				t.Fatal(err)
			}
			back, err := bundle.Unpack(archive, digest)
			if err != nil {
				t.Fatal(err)
			}
			equalFiles(t, back, files)
		})
	}
	files, _ := bundle.FromCloudInit(cp)
	found := false
	for _, f := range files {
		found = found || strings.Contains(string(f.Content), strings.TrimSpace(caKey))
	}
	if !found {
		t.Error("the first control-plane node's bundle does not carry its CA key")
	}
}

// What the stub could not reproduce is refused, each with a reason.
func TestFromCloudInitRefusesWhatTheStubCannotDo(t *testing.T) {
	doc := gpuWorker(t)
	merged, err := bootstrap.Merge(doc, "#!/bin/sh\necho user\n")
	if err != nil {
		t.Fatal(err)
	}
	start := "systemctl daemon-reload && systemctl enable --now " + bootstrap.BootstrapUnit
	cases := map[string]struct{ doc, why string }{
		"merged MIME":  {merged, "#cloud-config"},
		"other key":    {doc + "packages: [htop]\n", "packages"},
		"other owner":  {"#cloud-config\nwrite_files:\n- path: /etc/x\n  owner: ubuntu:ubuntu\n  content: x\nruncmd:\n- [/bin/sh, -c, '" + start + "']\n", "owner"},
		"other runcmd": {strings.Replace(doc, "enable --now", "start", 1), "runcmd"},
		"no runcmd":    {"#cloud-config\nwrite_files:\n- path: /etc/x\n  content: x\n", "runcmd"},
		"twice":        {"#cloud-config\nwrite_files:\n- {path: /etc/x, content: a}\n- {path: /etc/x, content: b}\nruncmd:\n- [/bin/sh, -c, '" + start + "']\n", "twice"},
		"encoding":     {"#cloud-config\nwrite_files:\n- {path: /etc/x, content: a, encoding: zstd}\nruncmd:\n- [/bin/sh, -c, '" + start + "']\n", "encoding"},
		"permissions":  {"#cloud-config\nwrite_files:\n- {path: /etc/x, content: a, permissions: '4755'}\nruncmd:\n- [/bin/sh, -c, '" + start + "']\n", "permissions"},
		"relative":     {"#cloud-config\nwrite_files:\n- {path: etc/x, content: a}\nruncmd:\n- [/bin/sh, -c, '" + start + "']\n", "path"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := bundle.FromCloudInit(c.doc); err == nil || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("%v, want an error naming %q", err, c.why)
			}
		})
	}
}
