package planerr

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

var errSentinel = errors.New("invalid storage request")

func TestErrorKeepsMessageAndSentinel(t *testing.T) {
	msg := fmt.Errorf("%w: capacity_tib must be at least 1, got 0", errSentinel)
	err := fmt.Errorf("sizing: %w", New("capacity_tib", "0", "must be at least 1", "set capacity_tib to 1 or more", msg))

	if got, want := err.Error(), "sizing: invalid storage request: capacity_tib must be at least 1, got 0"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, errSentinel) {
		t.Error("the sentinel is lost through *Error")
	}
	pe, ok := As(err)
	if !ok {
		t.Fatal("As found no *Error in the chain")
	}
	if pe.Path != "capacity_tib" || pe.Value != "0" || pe.Why != "must be at least 1" || pe.Fix != "set capacity_tib to 1 or more" {
		t.Errorf("fields = %+v", *pe)
	}
	if _, ok := As(errors.New("plain")); ok {
		t.Error("As found an *Error in a plain error")
	}
	if _, ok := As(nil); ok {
		t.Error("As found an *Error in nil")
	}
}

func TestPaths(t *testing.T) {
	e := New("object_lifecycle.ia_after_days", "-1", "why", "fix", errors.New("m"))
	if got := e.Steps(); !slices.Equal(got, []string{"object_lifecycle", "ia_after_days"}) {
		t.Errorf("Steps() = %q", got)
	}
	if got := New("", "", "", "", errors.New("m")).Steps(); got != nil {
		t.Errorf("Steps() of an empty path = %q, want nil", got)
	}
	d := New("size_gib", "10", "why", "fix", errors.New("m"))
	if got := d.Under("data_disks[1]").Path; got != "data_disks[1].size_gib" {
		t.Errorf("Under = %q", got)
	}
	if got := d.Under("").Path; got != "size_gib" {
		t.Errorf("Under(\"\") = %q", got)
	}
	if got := d.At("vswitch_cidrs").Path; got != "vswitch_cidrs" {
		t.Errorf("At = %q", got)
	}
	if d.Path != "size_gib" {
		t.Errorf("Under/At changed the original: %q", d.Path)
	}
}
