package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// bakeFor is the image a node with options o would take every install phase from.
func bakeFor(o Options) BakeOptions {
	return BakeOptions{Role: o.Role, Versions: o.Versions, ImageRegistry: o.Kubernetes.ImageRegistry, PackageMirror: o.PackageMirror,
		Region: o.Region, ERDMA: o.ERDMA, NVSwitch: o.NVSwitch, HostCUDA: o.HostCUDA, NFS: slices.ContainsFunc(o.Mounts, func(m string) bool {
			p, _ := ParseMount(m)
			return p.isNFS()
		}),
		Images: []string{images.RefIn(images.Pause, o.Kubernetes.ImageRegistry), images.RefIn(images.Flannel, o.Kubernetes.ImageRegistry)}}
}

// The builder runs the node's install phases as the node's script has them, byte for byte (the
// digest a node skips by is of the function's text), then pulls the images and seals.
func TestBakeRunsTheNodesInstallPhases(t *testing.T) {
	o := nvswitchWorker("cn-wulanchabu")
	o.Kubernetes.ImageRegistry = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"
	o.ERDMA = true
	o.Versions = o.Versions.WithDefaults() // as Render does
	bake := checkBakeHoldsInstallPhases(t, o, bakeFor(o))
	for _, w := range []string{"ctr -n k8s.io images pull --hosts-dir " + CertsDir + " '" + images.RefIn(images.Flannel, o.Kubernetes.ImageRegistry) + "'",
		"systemctl disable " + BootstrapUnit, "cloud-init clean --logs --seed", "truncate -s 0 /etc/machine-id", "modinfo -F version nvidia",
		"report " + StateBaked + "\n${GPUCLUSTER_POWEROFF:-systemctl poweroff --no-block}\n"} {
		if !strings.Contains(bake, w) {
			t.Errorf("the builder's script lacks %q", w)
		}
	}
	if strings.Contains(bake, "kubeadm config images pull") {
		t.Error("a GPU worker's image pulls kubeadm's control-plane images")
	}
}

// A control-plane image holds the install phases of both kinds of control-plane node (the first,
// which inits, and the others, which join) and kubeadm's control-plane images at the release the
// node installs, and nothing of a GPU's.
func TestControlPlaneBakeHoldsWhatControlPlaneNodesInstall(t *testing.T) {
	first := controlPlane()
	first.Region, first.Kubernetes.ImageRegistry = "cn-wulanchabu", "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"
	first.Kubernetes.CACertPEM, first.Kubernetes.CAKeyPEM, first.Kubernetes.CertificateKey = "ca", "key", strings.Repeat("ab", 32)
	first.Versions = first.Versions.WithDefaults()
	joiner := first
	joiner.Kubernetes.JoinControlPlane, joiner.Kubernetes.CACertHash = true, "sha256:"+strings.Repeat("ab", 32)
	b := bakeFor(first)
	for name, o := range map[string]Options{"first control-plane node": first, "joining control-plane node": joiner} {
		t.Run(name, func(t *testing.T) {
			bake := checkBakeHoldsInstallPhases(t, o, b)
			pull := "kubeadm config images pull --image-repository '" + first.Kubernetes.ImageRegistry + "' --kubernetes-version 'v" + first.Versions.k8sRelease() + "'"
			if !strings.Contains(phaseBody(bake, PhaseImages), pull) {
				t.Errorf("the images phase does not pull kubeadm's control-plane images (%s):\n%s", pull, phaseBody(bake, PhaseImages))
			}
			for _, gpu := range []string{"nvidia", "Fabric", "cuda"} {
				if strings.Contains(bake, gpu) {
					t.Errorf("a control-plane image's builder script mentions %q", gpu)
				}
			}
		})
	}
	for field, bad := range map[string]BakeOptions{"nvswitch": {Role: RoleControlPlane, NVSwitch: true}, "host_cuda": {Role: RoleControlPlane, HostCUDA: true}, "role": {Role: "etcd"}} {
		_, err := ValidateBake(bad)
		if pe, ok := planerr.As(err); !ok || pe.Path != field {
			t.Errorf("ValidateBake(%+v) = %v, want an error on %s", bad, err, field)
		}
	}
}

// checkBakeHoldsInstallPhases checks that the builder of b runs o's install phases exactly as
// o's script has them, then images and seal, and joins nothing; it answers the builder's script.
func checkBakeHoldsInstallPhases(t *testing.T, o Options, b BakeOptions) string {
	t.Helper()
	node := script(o)
	bake := BakeScript(b)
	var want []string
	for _, p := range phaseOrder(node) {
		if slices.Contains(installPhases, p) {
			want = append(want, p)
		}
	}
	if got := phaseOrder(bake); !slices.Equal(got, append(want, PhaseImages, PhaseSeal)) {
		t.Fatalf("bake phases %v, want the node's install phases %v then images, seal", got, want)
	}
	for _, p := range want {
		if phaseBody(bake, p) != phaseBody(node, p) {
			t.Errorf("phase %s differs between the builder and the node:\nbuilder:%s\nnode:%s", p, phaseBody(bake, p), phaseBody(node, p))
		}
	}
	if strings.Contains(bake, "kubeadm join") || strings.Contains(bake, "kubeadm init") {
		t.Error("the builder's script joins or inits a cluster")
	}
	return bake
}

// A node booted from a baked image skips the install phases the builder ran (same digest) and
// runs only its own; a node whose driver differs from the image's runs the driver phases again.
// The scripts run for real in bash, each phase through a stand-in that records it.
func TestNodeFromBakedImageSkipsWhatTheImageHolds(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	o := nvswitchWorker("cn-wulanchabu")
	o.Versions = o.Versions.WithDefaults() // as Render does
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("fake-phase", fakePhase)
	write("os-release", "ID=ubuntu\nVERSION_ID=22.04\n")
	run := func(script string) (ran []string, console string) {
		t.Helper()
		_ = os.Remove(filepath.Join(state, "runs"))
		_ = os.Remove(filepath.Join(dir, "console"))
		cmd := exec.Command(bash, write("script.sh", script))
		cmd.Env = append(os.Environ(), "GPUCLUSTER_STATE="+state, "GPUCLUSTER_LOG="+filepath.Join(dir, "log"),
			"GPUCLUSTER_CONSOLE="+filepath.Join(dir, "console"), "GPUCLUSTER_OS_RELEASE="+filepath.Join(dir, "os-release"),
			"GPUCLUSTER_RUN_PHASE="+filepath.Join(dir, "fake-phase"), "GPUCLUSTER_POWEROFF=echo powered-off", "STATE="+state)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		runs, _ := os.ReadFile(filepath.Join(state, "runs"))
		cons, _ := os.ReadFile(filepath.Join(dir, "console"))
		return strings.Fields(string(runs)), string(cons)
	}

	ran, console := run(BakeScript(bakeFor(o)))
	if got := ParseConsole(console); !got.Baked || got.Joined || got.FailedPhase != "" {
		t.Fatalf("the builder's console = %+v, want baked:\n%s", got, console)
	}
	if !slices.Contains(ran, PhaseDriver) || !slices.Contains(ran, PhaseSeal) {
		t.Fatalf("the builder ran %v", ran)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log")); !strings.Contains(string(log), "powered-off") {
		t.Error("the builder did not power off after baking")
	}

	ran, console = run(script(o))
	for _, p := range ran {
		if slices.Contains(installPhases, p) {
			t.Errorf("the node from the image ran install phase %s again (ran %v)", p, ran)
		}
	}
	if !slices.Contains(ran, PhaseJoin) {
		t.Errorf("the node did not run its join phase: ran %v", ran)
	}
	if got := ParseConsole(console); !got.Joined {
		t.Errorf("the node's console = %+v, want joined:\n%s", got, console)
	}

	// Another node, from the same image, with another driver: the driver and Fabric Manager
	// phases (both name the driver's version) run again; the rest is still skipped.
	for _, f := range []string{"phase-" + PhaseJoin + ".done"} {
		_ = os.Remove(filepath.Join(state, f))
	}
	other := o
	other.Versions.Driver = "535.161.08"
	ran, _ = run(script(other))
	for _, p := range []string{PhaseDriver, PhaseFabricManager} {
		if !slices.Contains(ran, p) {
			t.Errorf("a node with driver %s did not run %s over the image's (ran %v)", other.Versions.Driver, p, ran)
		}
	}
	for _, p := range []string{PhaseMirrors, PhasePackages, PhaseContainerRuntime, PhaseKubelet} {
		if slices.Contains(ran, p) {
			t.Errorf("phase %s ran again though it is the image's (ran %v)", p, ran)
		}
	}
}

func TestValidateBakeNamesTheAttribute(t *testing.T) {
	for _, c := range []struct {
		b    BakeOptions
		attr string
	}{
		{BakeOptions{PackageMirror: "tsinghua"}, "package_mirror"},
		{BakeOptions{ImageRegistry: "https://example.com/x"}, "image_registry"},
		{BakeOptions{Images: []string{"ok/image:1", "bad image; rm -rf /"}}, "images[1]"},
		{BakeOptions{Versions: Versions{Driver: "latest"}}, "versions.driver"},
	} {
		_, err := ValidateBake(c.b)
		if pe, ok := planerr.As(err); !ok || pe.Path != c.attr {
			t.Errorf("ValidateBake(%+v) = %v, want an input error at %s", c.b, err, c.attr)
		}
	}
	if _, err := ValidateBake(BakeOptions{}); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}
