package images

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// reference is the shape of a pinned reference: registry host, repository path, tag, and the
// digest where the row has one; no "latest", no short names.
var reference = regexp.MustCompile(`^[a-z0-9.-]+\.[a-z]+(:[0-9]+)?/[a-z0-9._-]+(/[a-z0-9._-]+)*:[A-Za-z0-9_.-]{1,128}(@sha256:[0-9a-f]{64})?$`)

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func TestTableIsPinned(t *testing.T) {
	seen := map[string]bool{}
	for _, i := range All() {
		if seen[i.Name] {
			t.Errorf("image %q is in the table twice", i.Name)
		}
		seen[i.Name] = true
		if !reference.MatchString(i.Ref()) {
			t.Errorf("image %q: %q is not registry/repository:tag", i.Name, i.Ref())
		}
		if i.Tag == "latest" || strings.TrimSpace(i.Purpose) == "" {
			t.Errorf("image %q: tag %q purpose %q; pin a version and say what it is for", i.Name, i.Tag, i.Purpose)
		}
	}
	for _, name := range []string{Flannel, FlannelCNIPlugin, DevicePlugin, DCGMExporter, Prometheus, Alertmanager, Grafana,
		NodeExporter, PrometheusAdapter, Reaper, NCCLTests, HPCG, PyTorch, ClusterAutoscaler, Pause, MPIOperator, LAMMPS, OpenFOAM, Horovod, GPUHealthAgent} {
		if !seen[name] {
			t.Errorf("constant %q has no row in the table", name)
		}
	}
	if len(Refs()) != len(All()) {
		t.Errorf("two rows share a reference")
	}
}

func TestGetPanicsOnUnknownName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Get of an unknown name did not panic")
		}
	}()
	Get("no-such-image")
}

// missingDigest is every image no public source documents a digest for yet. It may only shrink:
// a row that gains a digest must leave the list (the test fails otherwise), and a new row must
// come with its digest and source.
var missingDigest = []string{
	GPUHealthAgent,    // the project's own image: its digest is the one its build pushes
	PrometheusAdapter, // no pin of registry.k8s.io/prometheus-adapter/prometheus-adapter at any tag found ("prometheus-adapter:v0.12.0@", "prometheus-adapter@sha256"); v0.12.0 is the newest release
	NCCLTests,         // no pin of ghcr.io/coreweave/nccl-tests found ("coreweave/nccl-tests@sha256", "nccl2.19.3-1-868dc3d@sha256")
	HPCG,              // no pin of nvcr.io/nvidia/hpc-benchmarks:24.03 found ("hpc-benchmarks:24.03@", "hpc-benchmarks@sha256")
	PyTorch,           // pins of nvcr.io/nvidia/pytorch found are of other releases (26.x) or tagless; none of 24.03-py3 ("pytorch:24.03-py3@")
	MPIOperator,       // no pin of docker.io/mpioperator/mpi-operator found ("mpi-operator:0.8.0@", "mpioperator/mpi-operator@sha256")
	LAMMPS,            // no pin of nvcr.io/hpc/lammps found ("lammps:patch_15Jun2023@", "hpc/lammps@sha256")
	Horovod,           // no pin of docker.io/horovod/horovod found ("horovod/horovod:0.28.1@", "horovod/horovod@sha256")
	Kueue,             // pins of registry.k8s.io/kueue/kueue found are of other releases (kueue's release issues, v0.15-v0.17.x), none of v0.17.0 ("kueue/kueue:v0.17.0@sha256")
}

// TestDigestsStillMissing holds every row to a digest with its source, but the allow-list.
func TestDigestsStillMissing(t *testing.T) {
	var missing []string
	for _, i := range All() {
		switch {
		case i.Digest == "":
			missing = append(missing, i.Name)
			if !slices.Contains(missingDigest, i.Name) {
				t.Errorf("image %q has no digest: find the tag's multi-arch index digest in a public source and record it with DigestSource", i.Name)
			}
		case !digestRE.MatchString(i.Digest):
			t.Errorf("image %q: digest %q is not sha256:<64 hex>", i.Name, i.Digest)
		case strings.TrimSpace(i.DigestSource) == "":
			t.Errorf("image %q: digest without DigestSource; say where it is published", i.Name)
		case slices.Contains(missingDigest, i.Name):
			t.Errorf("image %q has a digest now: remove it from missingDigest", i.Name)
		}
	}
	t.Logf("%d of %d images pinned by digest; still tag-only: %s", len(All())-len(missing), len(All()), strings.Join(missing, ", "))
}

func TestMirrorName(t *testing.T) {
	const reg = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"
	for _, c := range []struct{ name, want string }{
		{Flannel, reg + "/flannel:v0.27.4@" + Get(Flannel).Digest},
		{DCGMExporter, reg + "/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04@" + Get(DCGMExporter).Digest},
		{Pause, reg + "/pause:3.10@" + Get(Pause).Digest},
		{Reaper, reg + "/python:3.12-alpine@" + Get(Reaper).Digest},
		// A row still without a digest is pulled by tag.
		{PrometheusAdapter, reg + "/prometheus-adapter:v0.12.0"},
	} {
		if got := RefIn(c.name, reg); got != c.want {
			t.Errorf("RefIn(%s) = %q, want %q", c.name, got, c.want)
		}
		if got := RefIn(c.name, ""); got != Ref(c.name) {
			t.Errorf("RefIn(%s, \"\") = %q, want the upstream %q", c.name, got, Ref(c.name))
		}
	}
	// The rule keeps only the last path element: two rows with the same one would collide.
	short := map[string]string{}
	for _, i := range All() {
		if other, ok := short[i.Short()]; ok {
			t.Errorf("images %s and %s both mirror to %q", other, i.Name, i.Short())
		}
		short[i.Short()] = i.Name
	}
}

func TestDefaultRegistry(t *testing.T) {
	for region, want := range map[string]string{
		"cn-wulanchabu":  "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster",
		"cn-hangzhou":    "registry-vpc.cn-hangzhou.aliyuncs.com/gpucluster",
		"cn-hongkong":    "",
		"ap-southeast-1": "",
		"us-west-1":      "",
	} {
		if got := DefaultRegistry(region); got != want {
			t.Errorf("DefaultRegistry(%s) = %q, want %q", region, got, want)
		}
		if err := CheckRegistry("image_registry", DefaultRegistry(region)); err != nil {
			t.Errorf("the default of %s is refused: %v", region, err)
		}
	}
	note := SyncNote("cn-wulanchabu")
	for _, want := range []string{"registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster", `namespace "gpucluster"`, Get(Grafana).TagRef(), "Container images in mainland China"} {
		if !strings.Contains(note, want) {
			t.Errorf("SyncNote does not name %q:\n%s", want, note)
		}
	}
}

func TestCheckRegistry(t *testing.T) {
	for _, ok := range []string{"", "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster", "example-registry-vpc.cn-wulanchabu.cr.aliyuncs.com/ml/images", "10.0.0.5:5000/mirror"} {
		if err := CheckRegistry("image_registry", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"https://registry.example.com/x", "registry.example.com", "registry.example.com/", "Registry.example.com/x", "gpucluster/images", "registry.example.com/x:1.0"} {
		err := CheckRegistry("image_registry", bad)
		pe, ok := planerr.As(err)
		if !ok || pe.Path != "image_registry" || pe.Value != bad || pe.Fix == "" {
			t.Errorf("%q: got %v, want a planerr.Error on image_registry", bad, err)
		}
	}
}
