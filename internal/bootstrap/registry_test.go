package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

const testRegistry = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"

var (
	imageRefLine  = regexp.MustCompile(`(?m)^\s*(?:- )?image: *"?([^"\s]+)"?\s*$`)
	sandboxLineRE = regexp.MustCompile(`sandbox_image = "([^"]+)"`)
	imageRepoRE   = regexp.MustCompile(`(?m)^imageRepository: (\S+)$`)
)

// nodeImages is every image reference a rendered node document makes: kubeadm's
// imageRepository, containerd's sandbox image, and the CNI manifest's images.
func nodeImages(t *testing.T, o Options) (refs []string, cc cloudConfig) {
	t.Helper()
	doc, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	cc = decodeCloudConfig(t, doc)
	for _, m := range imageRepoRE.FindAllStringSubmatch(file(t, cc, KubeadmPath).Content, -1) {
		refs = append(refs, m[1])
	}
	script := file(t, cc, ScriptPath).Content
	m := sandboxLineRE.FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("the script sets no sandbox image:\n%s", script)
	}
	refs = append(refs, m[1])
	if o.initNode() {
		cni, err := gunzipBase64(file(t, cc, AddonsDir+"/"+CNIAddonFile).Content)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range imageRefLine.FindAllStringSubmatch(cni, -1) {
			refs = append(refs, m[1])
		}
	}
	return refs, cc
}

// TestImageRegistryEverywhere: with a registry, kubeadm, containerd and the CNI take every image
// from it, pinned by digest where the table has one, and containerd gets a hosts.toml per public
// registry; without, the upstream references stay and there are no hosts files.
func TestImageRegistryEverywhere(t *testing.T) {
	withRegistry := func(o Options) Options { o.Kubernetes.ImageRegistry = testRegistry; return o }
	for name, o := range map[string]Options{"control_plane": withRegistry(controlPlane()), "worker": withRegistry(worker())} {
		refs, cc := nodeImages(t, o)
		if o.initNode() && !strings.Contains(file(t, cc, KubeadmPath).Content, "imageRepository: "+testRegistry+"\n") {
			t.Errorf("%s: kubeadm's ClusterConfiguration has no imageRepository %s", name, testRegistry)
		}
		want := 2 // sandbox + imageRepository
		if !o.initNode() {
			want = 1 // a joining node takes the ClusterConfiguration from the cluster
		} else {
			want += 3 // the CNI's three containers
		}
		if len(refs) != want {
			t.Errorf("%s: %d image references %v, want %d", name, len(refs), refs, want)
		}
		for _, ref := range refs {
			if ref != testRegistry && !strings.HasPrefix(ref, testRegistry+"/") {
				t.Errorf("%s: %q is not in the registry", name, ref)
			}
			for _, host := range images.UpstreamHosts() {
				if strings.Contains(ref, host) {
					t.Errorf("%s: %q names %s", name, ref, host)
				}
			}
			if ref != testRegistry && !strings.Contains(ref, "@sha256:") {
				t.Errorf("%s: %q is not pinned by digest", name, ref)
			}
		}
		for _, host := range images.UpstreamHosts() {
			f := file(t, cc, CertsDir+"/"+host+"/hosts.toml")
			if !strings.Contains(f.Content, `[host."https://registry-vpc.cn-wulanchabu.aliyuncs.com/v2/gpucluster"]`) || !strings.Contains(f.Content, "override_path = true") {
				t.Errorf("%s: %s:\n%s", name, f.Path, f.Content)
			}
		}
	}
	for name, o := range map[string]Options{"control_plane": controlPlane(), "worker": worker()} {
		refs, cc := nodeImages(t, o)
		if strings.Contains(file(t, cc, KubeadmPath).Content, "imageRepository") {
			t.Errorf("%s: imageRepository without a registry", name)
		}
		for _, ref := range refs {
			if !images.Refs()[ref] {
				t.Errorf("%s without a registry: %q is not a pinned upstream reference", name, ref)
			}
		}
		for _, f := range cc.WriteFiles {
			if strings.HasPrefix(f.Path, CertsDir) {
				t.Errorf("%s: %s written without a registry", name, f.Path)
			}
		}
	}
}

// containerd 1.7's and 2.x's `containerd config default`, the lines the script changes.
const (
	containerd17Default = `version = 2
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.8"
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ""
`
	containerd2Default = `version = 3
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = 'registry.k8s.io/pause:3.10'
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '/etc/containerd/certs.d:/etc/docker/certs.d'
`
)

// TestContainerdLinesEditBothConfigVersions runs the script's containerd lines on both default
// configurations: the sandbox image and the hosts directory are set, and a configuration without
// a sandbox setting stops the script.
func TestContainerdLinesEditBothConfigVersions(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	pause := images.RefIn(images.Pause, testRegistry)
	run := func(config string) (string, error) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		script := "step() { :; }\nset -e\n" + strings.ReplaceAll(strings.Join(containerdImageLines(testRegistry), "\n"), containerdConfig, cfg) + "\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		b, _ := os.ReadFile(cfg)
		if err != nil {
			return string(b), &exec.ExitError{Stderr: out}
		}
		return string(b), nil
	}
	for name, config := range map[string]string{"containerd 1.7": containerd17Default, "containerd 2": containerd2Default} {
		got, err := run(config)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Count(got, `"`+pause+`"`) != 1 || !strings.Contains(got, `config_path = "`+CertsDir+`"`) || strings.Contains(got, "registry.k8s.io") {
			t.Errorf("%s: edited configuration:\n%s", name, got)
		}
	}
	if _, err := run("version = 2\n"); err == nil {
		t.Error("a configuration without a sandbox image setting did not stop the script")
	}
}

func TestImageRegistryIsChecked(t *testing.T) {
	o := worker()
	o.Kubernetes.ImageRegistry = "registry.example.com"
	_, err := Render(o)
	if pe, ok := planerr.As(err); !ok || pe.Path != "kubernetes.image_registry" || pe.Value != "registry.example.com" {
		t.Fatalf("Render: %v, want a planerr.Error on kubernetes.image_registry", err)
	}
}

func TestRegistryScriptBashSyntax(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	o := controlPlane()
	o.Kubernetes.ImageRegistry = testRegistry
	doc, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cp.sh")
	if err := os.WriteFile(p, []byte(file(t, decodeCloudConfig(t, doc), ScriptPath).Content), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", p).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
}
