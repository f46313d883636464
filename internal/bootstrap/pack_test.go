package bootstrap_test

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

func TestPackUserDataRoundTrip(t *testing.T) {
	doc := "#cloud-config\n" + strings.Repeat("write_files: []\n", 200)
	packed := bootstrap.PackUserData(doc)
	if packed == doc || len(packed) >= len(doc) {
		t.Fatalf("packed user data is %d bytes for a %d-byte document: not compressed", len(packed), len(doc))
	}
	if packed != bootstrap.PackUserData(doc) {
		t.Error("the same document packs to different bytes: a pool's spec hash would change from plan to plan")
	}
	got, err := bootstrap.UnpackUserData(packed)
	if err != nil || got != doc {
		t.Fatalf("UnpackUserData(PackUserData(doc)) = %.40q, %v; want the document back", got, err)
	}
	// Plain user data (a user's own, or written before packing) reads as it is, as cloud-init reads it.
	if got, err := bootstrap.UnpackUserData(doc); err != nil || got != doc {
		t.Errorf("UnpackUserData(plain) = %.40q, %v; want it unchanged", got, err)
	}
	if _, err := bootstrap.UnpackUserData("\x1f\x8bnot gzip"); err == nil {
		t.Error("UnpackUserData took data with the gzip magic but no gzip stream")
	}
	// ParseRegistration reads packed user data: the data source reads DescribeUserData's answer.
	pools, _, _ := wholeCluster(t)
	worker, _ := render(t, pools[len(pools)-1])
	plain, err := bootstrap.ParseRegistration(worker)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := bootstrap.ParseRegistration(bootstrap.PackUserData(worker))
	if err != nil {
		t.Fatalf("ParseRegistration of packed user data: %v", err)
	}
	if len(reg.Files) == 0 || len(reg.Files) != len(plain.Files) {
		t.Errorf("packed user data registers %d files, plain %d", len(reg.Files), len(plain.Files))
	}
}
