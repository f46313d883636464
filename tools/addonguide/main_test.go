package main

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// TestGuideListsEveryImage: the page names every pinned image with its version, and the add-on
// files and namespaces it runs in.
func TestGuideListsEveryImage(t *testing.T) {
	page, err := render()
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	mainland := string(renderImages())
	for _, i := range images.All() {
		row := "| " + i.Name + " | `" + i.Registry + "/" + i.Repository + "` | `" + i.Tag + "` |"
		if inAddonTable(i) && !strings.Contains(s, row) {
			t.Errorf("the guide has no row %q", row)
		}
		if !strings.Contains(mainland, i.Name) || !strings.Contains(mainland, i.Registry+"/"+i.Repository) {
			t.Errorf("the mainland images guide does not list %s (%s/%s)", i.Name, i.Registry, i.Repository)
		}
	}
	for _, want := range []string{manifests.AddonMonitoring, manifests.AddonValidation, "`" + manifests.MonitoringNamespace + "` | `" + manifests.AddonMonitoring + "`"} {
		if !strings.Contains(s, want) {
			t.Errorf("the guide does not mention %q", want)
		}
	}
	again, _ := render()
	if string(again) != s {
		t.Error("two renders differ")
	}
}
