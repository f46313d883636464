package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestCheckControlPlane(t *testing.T) {
	const lb = "lb-0123456789"
	k8s := func(role, lbID string) *k8sModel {
		k := &k8sModel{Role: types.StringValue(role), LoadBalancerID: types.StringNull(), ControlPlaneInit: types.BoolNull(), APIEndpoint: types.StringNull(),
			CertificateKey: types.StringNull(), CACertPEM: types.StringNull(), CAKeyPEM: types.StringNull(), Addons: types.MapNull(types.StringType)}
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
			checkControlPlane(types.Int64Value(c.size), c.k, false, &diags)
			expectOneErrorAt(t, diags, c.wantPath, c.wantWords)
		})
	}
	// An unknown size (a variable not yet known) is checked at apply, not refused now.
	var diags diag.Diagnostics
	checkControlPlane(types.Int64Unknown(), k8s("control_plane", ""), true, &diags)
	if diags.HasError() {
		t.Errorf("unknown size refused: %v", diags)
	}
}

// With the node bootstrap on, a control plane is a first pool of 1 (kubeadm init) and a joining
// pool of 2 or 4 with the certificate key and the load balancer.
func TestCheckControlPlaneBootstrapped(t *testing.T) {
	const lb = "lb-0123456789"
	k8s := func(role string, init *bool, lbID, certKey string) *k8sModel {
		k := &k8sModel{Role: types.StringValue(role), LoadBalancerID: types.StringNull(), ControlPlaneInit: types.BoolNull(), APIEndpoint: types.StringNull(),
			CertificateKey: types.StringNull(), CACertPEM: types.StringNull(), CAKeyPEM: types.StringNull(), Addons: types.MapNull(types.StringType)}
		if init != nil {
			k.ControlPlaneInit = types.BoolValue(*init)
		}
		if lbID != "" {
			k.LoadBalancerID = types.StringValue(lbID)
		}
		if certKey != "" {
			k.CertificateKey = types.StringValue(certKey)
		}
		return k
	}
	yes, no := true, false
	key := strings.Repeat("ab", 32)
	withAddons := k8s("control_plane", &no, lb, key)
	withAddons.Addons = types.MapValueMust(types.StringType, map[string]attr.Value{"a.yaml": types.StringValue("x")})
	cases := []struct {
		name      string
		size      int64
		k         *k8sModel
		wantPath  path.Path
		wantWords []string
	}{
		{"first pool of 1 by default", 1, k8s("control_plane", nil, lb, key), path.Empty(), nil},
		{"first pool of 1", 1, k8s("control_plane", &yes, lb, key), path.Empty(), nil},
		{"first pool of 3", 3, k8s("control_plane", nil, lb, key), path.Root("size"), []string{"size = 3", "kubeadm init must run once", "size = 2", "control_plane_init = false"}},
		{"joining pool of 2", 2, k8s("control_plane", &no, lb, key), path.Empty(), nil},
		{"joining pool of 4", 4, k8s("control_plane", &no, lb, key), path.Empty(), nil},
		{"joining pool of 3", 3, k8s("control_plane", &no, lb, key), path.Root("size"), []string{"size = 3", "4 etcd members", "size = 2"}},
		{"joining pool without a load balancer", 2, k8s("control_plane", &no, "", key), path.Root("kubernetes").AtName("load_balancer_id"), []string{"load_balancer_id", "api_endpoint"}},
		{"joining pool without a certificate key", 2, k8s("control_plane", &no, lb, ""), path.Root("kubernetes").AtName("certificate_key"), []string{"gpucluster_cluster_ca.<name>.certificate_key"}},
		{"addons on the joining pool", 2, withAddons, path.Root("kubernetes").AtName("addons"), []string{"first control-plane node", "Move it"}},
		{"control_plane_init on workers", 4, k8s("gpu_worker", &yes, "", ""), path.Root("kubernetes").AtName("control_plane_init"), []string{`role "gpu_worker"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var diags diag.Diagnostics
			checkControlPlane(types.Int64Value(c.size), c.k, true, &diags)
			expectOneErrorAt(t, diags, c.wantPath, c.wantWords)
		})
	}
}

// expectOneErrorAt fails unless diags is clean when want is path.Empty(), or else holds exactly one
// error, on want, whose detail has every word.
func expectOneErrorAt(t *testing.T, diags diag.Diagnostics, want path.Path, words []string) {
	t.Helper()
	if want.Equal(path.Empty()) {
		if diags.HasError() {
			t.Fatalf("unexpected error: %v", diags)
		}
		return
	}
	if diags.ErrorsCount() != 1 {
		t.Fatalf("want one error on %s, got %v", want, diags)
	}
	d, ok := diags.Errors()[0].(diag.DiagnosticWithPath)
	if !ok || !d.Path().Equal(want) {
		t.Fatalf("error not on %s: %v", want, diags.Errors()[0])
	}
	for _, w := range words {
		if !strings.Contains(d.Detail(), w) {
			t.Errorf("detail lacks %q: %s", w, d.Detail())
		}
	}
}

// TestCheckControlPlaneWaves: a control-plane pool replaces one node at a time; workers may roll
// in larger waves, an unknown wave size is checked at apply, and a pool without the provider's
// bootstrap is the user's to judge.
func TestCheckControlPlaneWaves(t *testing.T) {
	cp := &k8sModel{Role: types.StringValue("control_plane")}
	worker := &k8sModel{Role: types.StringValue("gpu_worker")}
	wave := func(v types.Int64) *updateModel { return &updateModel{MaxUnavailable: v} }
	for _, c := range []struct {
		name         string
		k            *k8sModel
		u            *updateModel
		bootstrapped bool
		wantPath     path.Path
	}{
		{"control plane, two at once", cp, wave(types.Int64Value(2)), true, path.Root("update_strategy").AtName("max_unavailable")},
		{"control plane, one at a time", cp, wave(types.Int64Value(1)), true, path.Empty()},
		{"control plane, default", cp, nil, true, path.Empty()},
		{"control plane, unknown", cp, wave(types.Int64Unknown()), true, path.Empty()},
		{"control plane of the user's own image", cp, wave(types.Int64Value(2)), false, path.Empty()},
		{"workers, three at once", worker, wave(types.Int64Value(3)), true, path.Empty()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var diags diag.Diagnostics
			checkControlPlaneWaves(c.k, c.u, c.bootstrapped, &diags)
			var words []string
			if len(c.wantPath.Steps()) > 0 {
				words = []string{`"2"`, "etcd", "one node at a time", "max_unavailable = 1"}
			}
			expectOneErrorAt(t, diags, c.wantPath, words)
		})
	}
}
