package bootstrap

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr/planerrtest"
)

// Bad input names the attribute, the value, why and the fix as data; a version error also names
// the supported range, and a label's key, dots and all, is one quoted path step.
func TestBadInputIsPlanerr(t *testing.T) {
	o := worker()
	o.Versions.Driver = "470.82.01"
	_, err := Validate(o)
	planerrtest.AssertAttribute(t, err, "versions.driver", "470.82.01")
	if pe, _ := planerr.As(err); pe == nil || pe.Supported != MinDriver+" or newer" {
		t.Errorf("%v: Supported = %+v, want %s or newer", err, pe, MinDriver)
	}

	o = worker()
	o.Kubernetes.Labels = map[string]string{"a.example.org/team": "bad value"}
	_, err = Validate(o)
	planerrtest.AssertAttribute(t, err, `kubernetes.labels["a.example.org/team"]`, "bad value")
}
