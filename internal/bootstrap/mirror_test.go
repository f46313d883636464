package bootstrap

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// With the in-VPC mirror, apt and pip are pointed at it before the first apt-get update; with
// the default, the image's sources stay untouched.
func TestPackageMirrorScript(t *testing.T) {
	for _, role := range []Options{worker(), controlPlane()} {
		o := role
		o.Versions = o.Versions.WithDefaults() // as Render does
		o.PackageMirror = MirrorAlibabaVPC
		s := script(o)
		mirror := strings.Index(s, "> /etc/apt/sources.list\n")
		update := strings.Index(s, "apt-get update")
		if mirror < 0 || update < 0 || mirror > update {
			t.Fatalf("%s: sources.list written at %d, first apt-get update at %d; want the mirror first:\n%s", o.Role, mirror, update, s)
		}
		for _, want := range []string{
			"deb http://mirrors.cloud.aliyuncs.com/ubuntu/ jammy main restricted universe multiverse\\n",
			"deb http://mirrors.cloud.aliyuncs.com/ubuntu/ jammy-security main",
			"index-url = http://mirrors.cloud.aliyuncs.com/pypi/simple/",
			"> /etc/pip.conf",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%s with alibaba_vpc: script lacks %q", o.Role, want)
			}
		}
		for _, m := range []string{"", MirrorInternet} {
			o.PackageMirror = m
			if s := script(o); strings.Contains(s, AlibabaVPCMirrorHost+"/ubuntu") || strings.Contains(s, PipConfPath) {
				t.Errorf("%s with package_mirror %q still rewrites the sources", o.Role, m)
			}
		}
	}
}

func TestInternetSources(t *testing.T) {
	w := worker()
	w.PackageMirror = MirrorInternet
	all := strings.Join(InternetSources(w), ";")
	for _, want := range []string{"Ubuntu packages, the NVIDIA driver", "nvidia.github.io", "pkgs.k8s.io", "registry.k8s.io"} {
		if !strings.Contains(all, want) {
			t.Errorf("internet: InternetSources = %s; want %s", all, want)
		}
	}
	// With the in-VPC mirror only the images remain (kubeadm's image repository is its own
	// setting), for both roles; the host CUDA toolkit comes back only when asked for.
	w.PackageMirror = MirrorAlibabaVPC
	for _, o := range []Options{w, {Role: RoleControlPlane, PackageMirror: MirrorAlibabaVPC}} {
		if got := InternetSources(o); len(got) != 1 || !strings.Contains(got[0], "registry.k8s.io") {
			t.Errorf("%s with alibaba_vpc: InternetSources = %v; want the images only", o.Role, got)
		}
	}
	w.HostCUDA = true
	if got := strings.Join(InternetSources(w), ";"); !strings.Contains(got, "developer.download.nvidia.com") {
		t.Errorf("host_cuda: InternetSources = %s; want NVIDIA's CUDA repository", got)
	}
	// The region picks the default.
	for region, want := range map[string]string{"cn-wulanchabu": MirrorAlibabaVPC, "cn-beijing": MirrorAlibabaVPC, "cn-hongkong": MirrorInternet,
		"ap-southeast-1": MirrorInternet, "": MirrorInternet} {
		if got := DefaultPackageMirror(region); got != want {
			t.Errorf("DefaultPackageMirror(%q) = %s, want %s", region, got, want)
		}
	}
}

func TestPackageMirrorValidate(t *testing.T) {
	o := controlPlane()
	o.PackageMirror = "tsinghua"
	_, err := Validate(o)
	var in *planerr.Error
	if !errors.As(err, &in) || in.Path != "package_mirror" || !strings.Contains(in.Fix, "alibaba_vpc") {
		t.Errorf("Validate(package_mirror = tsinghua) = %v; want a *planerr.Error on package_mirror naming the values", err)
	}
}

// An import reads the mirror back from a node's user data: rendered, packed, read back, it must
// give the mirror it was rendered with, and nothing for user data that is not a bootstrap.
func TestMirrorInUserDataReadsBackTheRenderedMirror(t *testing.T) {
	for _, role := range []Options{worker(), controlPlane()} {
		for _, mirror := range PackageMirrors() {
			o := role
			o.PackageMirror = mirror
			doc, err := Render(o)
			if err != nil {
				t.Fatalf("%s/%s: %v", o.Role, mirror, err)
			}
			if got, ok := MirrorInUserData(PackUserData(doc)); !ok || got != mirror {
				t.Errorf("%s rendered with %q reads back as %q (ok %v)", o.Role, mirror, got, ok)
			}
		}
	}
	for _, foreign := range []string{"", "#!/bin/sh\necho hello\n", "\x1f\x8bnot gzip"} {
		if got, ok := MirrorInUserData(foreign); ok {
			t.Errorf("user data %q is not a bootstrap but reads as mirror %q", foreign, got)
		}
	}
}
