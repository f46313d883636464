package provider

import (
	"errors"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

func TestAttributePath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want path.Path
	}{
		{"capacity_tib", path.Root("capacity_tib")},
		{"object_lifecycle.ia_after_days", path.Root("object_lifecycle").AtName("ia_after_days")},
		{"data_disks[1].size_gib", path.Root("data_disks").AtListIndex(1).AtName("size_gib")},
		{"kubernetes.taints[0].effect", path.Root("kubernetes").AtName("taints").AtListIndex(0).AtName("effect")},
		{`tags["a.b"]`, path.Root("tags").AtMapKey("a.b")},
		{`kubernetes.labels["gpucluster.io/x"]`, path.Root("kubernetes").AtName("labels").AtMapKey("gpucluster.io/x")},
		{`mpi.teams["chem"].gpus`, path.Root("mpi").AtName("teams").AtMapKey("chem").AtName("gpus")},
		// A key holding brackets, quotes and what looks like an index stays one map key.
		{`tags["x[0].y\"]"]`, path.Root("tags").AtMapKey(`x[0].y"]`)},
		{`tags["7"]`, path.Root("tags").AtMapKey("7")},
		{`m["a"]["b"]`, path.Root("m").AtMapKey("a").AtMapKey("b")},
		{"grid[2][3]", path.Root("grid").AtListIndex(2).AtListIndex(3)},
	} {
		got, err := attributePath(c.in)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("attributePath(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestAttributePathRefusesMalformed(t *testing.T) {
	for _, in := range []string{
		"", ".a", "a.", "a..b", "a[", "a[]", "a[-1]", "a[x]", "a[1", `a["x"`, `a["x]`, `a["x"]b`, "a]b", `a"b`,
		// The unquoted key the old parser took: a dot inside it would have split it in two.
		"kubernetes.labels[example.org/team]",
	} {
		if got, err := attributePath(in); err == nil {
			t.Errorf("attributePath(%s) = %s, want an error", in, got)
		}
	}
}

// What planerr's helpers build, the parser reads back as the same steps.
func TestPlanErrorPathRoundTrip(t *testing.T) {
	key := `gpucluster.io/a["b"].c`
	err := planerr.Input(planerr.Join(planerr.Key(planerr.Join("kubernetes", "labels"), key), "x"), "v", "why", "fix")
	want := path.Root("kubernetes").AtName("labels").AtMapKey(key).AtName("x")
	if got := planErrorPath(err, path.Root("fallback")); !got.Equal(want) {
		t.Errorf("planErrorPath = %s, want %s", got, want)
	}
	if got := planErrorPath(errors.New("plain"), path.Root("fallback")); !got.Equal(path.Root("fallback")) {
		t.Errorf("planErrorPath(plain) = %s, want the fallback", got)
	}
	if got := planErrorPath(planerr.Input("a[", "", "why", "fix"), path.Root("fallback")); !got.Equal(path.Root("fallback")) {
		t.Errorf("planErrorPath(malformed) = %s, want the fallback", got)
	}
}

// The node pool names bootstrap's errors at the attributes it has always named.
func TestBootstrapErrorPath(t *testing.T) {
	k8s := path.Root("kubernetes")
	for _, c := range []struct {
		in   error
		want path.Path
	}{
		{planerr.Input("versions.driver", "470", "why", "fix"), k8s.AtName("versions").AtName("driver")},
		{planerr.Input(planerr.Index("mounts", 2), "x", "why", "fix"), path.Root("mounts").AtListIndex(2)},
		{planerr.Input(planerr.Key("kubernetes.labels", "a.b/c"), "x", "why", "fix"), k8s.AtName("labels")},
		{planerr.Input("kubernetes.taints[0].effect", "x", "why", "fix"), k8s.AtName("taints")},
		{planerr.Input("kubernetes.join_token", "", "why", "fix"), k8s.AtName("join_token")},
		{planerr.Input(planerr.Key("nccl_env", "X"), "x", "why", "fix"), k8s},
		{planerr.Input("role", "x", "why", "fix"), k8s},
		{errors.New("plain"), k8s},
	} {
		if got := bootstrapErrorPath(c.in); !got.Equal(c.want) {
			t.Errorf("bootstrapErrorPath(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}
