package planerr

import (
	"errors"
	"fmt"
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

func TestInputWritesMessageFromFields(t *testing.T) {
	e := Input("max_runtime", "30m0s", "is under one hour", "use 72h")
	if got, want := e.Error(), `max_runtime "30m0s" is under one hour; use 72h`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if e.Path != "max_runtime" || e.Value != "30m0s" || e.Why != "is under one hour" || e.Fix != "use 72h" {
		t.Errorf("fields = %+v", *e)
	}
	// A secret's value is left out of the message.
	if got, want := Input("kubernetes.join_token", "", "is not a token", "generate one").Error(), "kubernetes.join_token is not a token; generate one"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	s := e.WithSupported("1h or more")
	if s.Supported != "1h or more" || e.Supported != "" {
		t.Errorf("WithSupported: copy %q, original %q", s.Supported, e.Supported)
	}
}

func TestPaths(t *testing.T) {
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
	for _, c := range []struct{ got, want string }{
		{Join("kubernetes", "labels"), "kubernetes.labels"},
		{Join("", "labels"), "labels"},
		{Join("kubernetes", ""), "kubernetes"},
		{Index("data_disks", 1), "data_disks[1]"},
		{Key("tags", "a.b"), `tags["a.b"]`},
		{Key(Join("kubernetes", "labels"), "gpucluster.io/x"), `kubernetes.labels["gpucluster.io/x"]`},
		{Key("tags", `x["y"]`), `tags["x[\"y\"]"]`},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
