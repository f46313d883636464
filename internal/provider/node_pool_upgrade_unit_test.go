package provider

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

// TestAutoscaledUpgradeWarning: an autoscaling worker pool whose minor rises is warned to have
// the control plane applied first; a patch release, a fixed pool and a control-plane pool are not.
func TestAutoscaledUpgradeWarning(t *testing.T) {
	v := func(k string) bootstrap.Versions { return bootstrap.Versions{Kubernetes: k} }
	w := autoscaledUpgradeWarning(bootstrap.RoleGPUWorker, true, v("1.36.3"), v("1.37.2"))
	for _, want := range []string{"1.36.3 to 1.37.2", "kubelet is 1.37.2", bootstrap.VersionSkewPolicy, "-target", "depends_on"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
	for _, c := range []struct {
		role        string
		autoscaling bool
		from, to    string
	}{
		{bootstrap.RoleGPUWorker, true, "1.37.1", "1.37.2"},
		{bootstrap.RoleGPUWorker, false, "1.36.3", "1.37.2"},
		{bootstrap.RoleControlPlane, true, "1.36.3", "1.37.2"},
	} {
		if w := autoscaledUpgradeWarning(c.role, c.autoscaling, v(c.from), v(c.to)); w != "" {
			t.Errorf("%+v: warned %q, want nothing", c, w)
		}
	}
}
