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
	all := InternetSources(w)
	w.PackageMirror = MirrorAlibabaVPC
	mirrored := InternetSources(w)
	if len(mirrored) != len(all)-1 || strings.Contains(strings.Join(mirrored, ";"), "Ubuntu packages") {
		t.Errorf("the mirror should take Ubuntu packages off the list: %v -> %v", all, mirrored)
	}
	// What no in-VPC mirror covers stays, for both roles.
	for _, o := range []Options{w, {Role: RoleControlPlane, PackageMirror: MirrorAlibabaVPC}} {
		got := strings.Join(InternetSources(o), ";")
		for _, want := range []string{"pkgs.k8s.io", "registry.k8s.io"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: InternetSources = %s; want %s", o.Role, got, want)
			}
		}
		if strings.Contains(got, "nvidia") != (o.Role == RoleGPUWorker) {
			t.Errorf("%s: InternetSources = %s; NVIDIA sources belong to GPU workers only", o.Role, got)
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
