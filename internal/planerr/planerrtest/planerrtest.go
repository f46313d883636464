// Package planerrtest holds the one assertion the planning packages' tests share: that an error
// is a *planerr.Error about the expected attribute and value, with a why and a fix.
package planerrtest

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// AssertAttribute fails t unless err carries a *planerr.Error with this Path and Value and a
// non-empty Why and Fix.
func AssertAttribute(t testing.TB, err error, path, value string) {
	t.Helper()
	pe, ok := planerr.As(err)
	if !ok {
		t.Fatalf("no *planerr.Error in %v", err)
	}
	if pe.Path != path || pe.Value != value {
		t.Errorf("Path, Value = %q, %q; want %q, %q", pe.Path, pe.Value, path, value)
	}
	if pe.Why == "" || pe.Fix == "" {
		t.Errorf("Why %q or Fix %q is empty", pe.Why, pe.Fix)
	}
}
