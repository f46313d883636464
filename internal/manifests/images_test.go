package manifests

import (
	"regexp"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// imageLine finds every image a rendered manifest names, whatever object holds it.
var imageLine = regexp.MustCompile(`(?m)^\s*(?:- )?image: *"?([^"\s]+)"?\s*$`)

// TestEveryImageIsPinned greps every rendered manifest for images and fails on one that is not in
// internal/images: a version written anywhere else would drift from the table and the guide.
func TestEveryImageIsPinned(t *testing.T) {
	pinned := images.Refs()
	for _, sc := range catalog.Scenarios() {
		docs, err := Render(opts(sc.Name))
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, d := range docs {
			for _, m := range imageLine.FindAllStringSubmatch(d.YAML, -1) {
				found++
				if !pinned[m[1]] {
					t.Errorf("%s: %s %s names image %q, which is not in internal/images", sc.Name, d.Kind, d.Name, m[1])
				}
			}
		}
		if found == 0 {
			t.Fatalf("%s: no image found in the rendered manifests; the pattern is wrong", sc.Name)
		}
	}
}
