package manifests

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

const testRegistry = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"

// renderedImages renders everything this package renders for a scenario (the pool's objects, every
// add-on file with validation and the Cluster Autoscaler, the MPI objects) with the image registry
// set to registry, and returns each image with what named it.
func renderedImages(t *testing.T, scenario, registry string) map[string]string {
	t.Helper()
	o := opts(scenario)
	o.ImageRegistry = registry
	found := map[string]string{}
	grep := func(what, y string) {
		for _, m := range imageLine.FindAllStringSubmatch(y, -1) {
			found[m[1]] = what
		}
	}
	docs, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	grep("Render", Join(docs))
	ca := autoscalerOpts()
	files, err := AddonsYAML(o, AddonOptions{Validation: true, ClusterAutoscaler: &ca})
	if err != nil {
		t.Fatal(err)
	}
	for name, y := range files {
		grep("addon "+name, y)
	}
	mo, m := mpiOpts(2, 8, true)
	mo.Scenario, mo.ImageRegistry = scenario, registry
	r, err := RenderMPI(mo, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range [][]Document{r.Operator, r.Queues, r.MolecularDynamics, r.CFD, r.Horovod, r.Scaling} {
		grep("RenderMPI", Join(group))
	}
	if len(found) == 0 {
		t.Fatal("no image found; the pattern is wrong")
	}
	return found
}

// TestEveryImageGoesThroughTheRegistry: with a registry set, every image any scenario renders is
// <registry>/<name>:<tag>, none names a public registry, and each is pinned by digest where the
// table has one; without, every image is the table's upstream reference.
func TestEveryImageGoesThroughTheRegistry(t *testing.T) {
	var mirrored, upstream []string
	for _, i := range images.All() {
		mirrored = append(mirrored, i.MirrorName(testRegistry))
		upstream = append(upstream, i.Ref())
	}
	for _, sc := range catalog.ScenarioNames() {
		for ref, what := range renderedImages(t, sc, testRegistry) {
			if !strings.HasPrefix(ref, testRegistry+"/") {
				t.Errorf("%s: %s names %q, not in the registry %s", sc, what, ref, testRegistry)
			}
			for _, host := range images.UpstreamHosts() {
				if strings.Contains(ref, host) {
					t.Errorf("%s: %s names %q, which still names %s", sc, what, ref, host)
				}
			}
			if !slices.Contains(mirrored, ref) {
				t.Errorf("%s: %s names %q, which is no pinned image's mirrored reference", sc, what, ref)
			}
		}
		for ref, what := range renderedImages(t, sc, "") {
			if !slices.Contains(upstream, ref) {
				t.Errorf("%s without a registry: %s names %q, which is not a pinned upstream reference", sc, what, ref)
			}
		}
	}
	// Pinned by digest: every rendered reference of an image whose row has a digest carries it.
	for _, i := range images.All() {
		if i.Digest != "" && !strings.HasSuffix(i.MirrorName(testRegistry), "@"+i.Digest) {
			t.Errorf("%s: mirrored reference %q drops the digest", i.Name, i.MirrorName(testRegistry))
		}
	}
}

func TestImageRegistryIsChecked(t *testing.T) {
	o := opts(catalog.ScenarioAITraining)
	o.ImageRegistry = "https://registry.example.com/x"
	_, err := Render(o)
	if pe, ok := planerr.As(err); !ok || pe.Path != "image_registry" {
		t.Fatalf("Render with a scheme in image_registry: %v, want a planerr.Error on image_registry", err)
	}
	// An image set one by one wins over the registry.
	o.ImageRegistry = testRegistry
	o.Images.Reaper = "registry.example.com/tools/python:3.12"
	docs, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	if y := Join(docs); !strings.Contains(y, "image: registry.example.com/tools/python:3.12\n") {
		t.Errorf("the reaper image set in Images is not used")
	}
}
