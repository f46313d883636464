package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestCheckControlPlane(t *testing.T) {
	const lb = "lb-0123456789"
	k8s := func(role, lbID string) *k8sModel {
		k := &k8sModel{Role: types.StringValue(role), LoadBalancerID: types.StringNull()}
		if role == "" {
			k.Role = types.StringNull()
		}
		if lbID != "" {
			k.LoadBalancerID = types.StringValue(lbID)
		}
		return k
	}
	cases := []struct {
		name string
		size int64
		k    *k8sModel
		// wantPath is the attribute the error names, "" for no error; wantWords must all be in it.
		wantPath  path.Path
		wantWords []string
	}{
		{"single control plane, no load balancer", 1, k8s("control_plane", ""), path.Empty(), nil},
		{"single control plane behind one", 1, k8s("control_plane", lb), path.Empty(), nil},
		{"three behind one", 3, k8s("control_plane", lb), path.Empty(), nil},
		{"five behind one", 5, k8s("control_plane", lb), path.Empty(), nil},
		{"two", 2, k8s("control_plane", lb), path.Root("size"), []string{"size = 2", "etcd", "Use size = 1", "3", "5"}},
		{"four", 4, k8s("control_plane", lb), path.Root("size"), []string{"size = 4", "Use size = 1"}},
		{"seven", 7, k8s("control_plane", lb), path.Root("size"), []string{"size = 7", "more than 5"}},
		{"three without a load balancer", 3, k8s("control_plane", ""), path.Root("kubernetes").AtName("load_balancer_id"),
			[]string{"size = 3", "gpucluster_control_plane_endpoint", "size = 1"}},
		{"workers of any size", 4, k8s("gpu_worker", ""), path.Empty(), nil},
		{"workers by default", 4, k8s("", ""), path.Empty(), nil},
		{"workers with a load balancer", 4, k8s("", lb), path.Root("kubernetes").AtName("load_balancer_id"),
			[]string{`role "gpu_worker"`, "Remove it here"}},
		{"no kubernetes block", 2, nil, path.Empty(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var diags diag.Diagnostics
			checkControlPlane(types.Int64Value(c.size), c.k, &diags)
			if c.wantPath.Equal(path.Empty()) {
				if diags.HasError() {
					t.Fatalf("unexpected error: %v", diags)
				}
				return
			}
			if diags.ErrorsCount() != 1 {
				t.Fatalf("want one error on %s, got %v", c.wantPath, diags)
			}
			d, ok := diags.Errors()[0].(diag.DiagnosticWithPath)
			if !ok || !d.Path().Equal(c.wantPath) {
				t.Fatalf("error not on %s: %v", c.wantPath, diags.Errors()[0])
			}
			for _, w := range c.wantWords {
				if !strings.Contains(d.Detail(), w) {
					t.Errorf("detail lacks %q: %s", w, d.Detail())
				}
			}
		})
	}
	// An unknown size (a variable not yet known) is checked at apply, not refused now.
	var diags diag.Diagnostics
	checkControlPlane(types.Int64Unknown(), k8s("control_plane", ""), &diags)
	if diags.HasError() {
		t.Errorf("unknown size refused: %v", diags)
	}
}
