package provider

import (
	"os"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// The node images guide lists what an image holds and the versions: it must name every phase a
// builder runs and say the defaults the code bakes today (the driver, the Kubernetes minor, each
// pre-pulled image with its tag), so a new default without the guide fails here.
func TestNodeImageGuideSaysWhatAnImageHolds(t *testing.T) {
	raw, err := os.ReadFile("../../templates/guides/node-images.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(raw)
	v := bootstrap.DefaultVersions()
	want := []string{"default " + v.Driver, "default " + v.Kubernetes, "`versions.cuda` " + v.CUDA, "`versions.nccl` " + v.NCCL}
	for _, phase := range []string{bootstrap.PhaseMirrors, bootstrap.PhasePackages, bootstrap.PhaseERDMA, bootstrap.PhaseDriver,
		bootstrap.PhaseFabricManager, bootstrap.PhaseContainerRuntime, bootstrap.PhaseHostCUDA, bootstrap.PhaseKubelet,
		bootstrap.PhaseImages, bootstrap.PhaseSeal} {
		want = append(want, "| `"+phase+"` |")
	}
	for _, name := range defaultBakedImages {
		ref, _, _ := strings.Cut(images.RefIn(name, ""), "@") // the guide gives tags; the digests are in the images output
		want = append(want, "`"+ref+"`")
	}
	for _, w := range want {
		if !strings.Contains(guide, w) {
			t.Errorf("the node images guide does not say %q", w)
		}
	}
}
