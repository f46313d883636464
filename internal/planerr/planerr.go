// Package planerr is the one error the pure planning packages (bootstrap, manifests, alerting,
// catalog, storageplan, netplan, poolplan) return when what the user asked for cannot be planned.
// It carries, as data, the attribute the bad value came from, the value, why it is wrong and how
// to fix it, so the provider can point its diagnostic at the attribute without reading the
// message.
//
// # Paths
//
// Path is written in this grammar (the provider's attributePath is its one parser):
//
//	path  = name { "." name | "[" index "]" | "[" key "]" }
//	name  = Terraform attribute name: any characters but '.', '[', ']' and '"'
//	index = decimal digits, a list element: data_disks[1].size_gib
//	key   = a Go double-quoted string (strconv.Quote), a map key: tags["a.b"],
//	        kubernetes.labels["gpucluster.io/x"]
//
// A map key may hold dots, brackets and quotes, which is why it is quoted: build paths with
// Join, Index and Key rather than by hand, so producers and the parser always agree.
package planerr

import (
	"errors"
	"fmt"
	"strconv"
)

// Error is a mistake in user input found while planning.
//
// Path is the attribute relative to the object the planning function was given: "min_iops" and
// "object_lifecycle.ia_after_days" on a storage tier, "gpus_per_node" on a node pool, "size_gib"
// on one disk block (the caller knows which disk and puts its own path in front, see Under).
//
// Error() is the message the planning package has always written (callers and tests may show it
// whole); Why and Fix are its two halves as data, for a diagnostic that states them apart.
type Error struct {
	Path  string
	Value string
	Why   string
	Fix   string
	// Supported is the accepted range when the check is against one, such as "510.47.03 or
	// newer" for a driver version or "1..100" for a percentage; empty otherwise. It is data for
	// a caller that offers the range (a diagnostic, a validator), so none parses it out of Why.
	Supported string
	// Err is the full message. It may wrap the package's sentinel (catalog.ErrInvalidDisk,
	// storageplan.ErrInvalid, ...), so errors.Is keeps working through an *Error.
	Err error
}

// New ties err, the message, to the attribute at path.
func New(path, value, why, fix string, err error) *Error {
	return &Error{Path: path, Value: value, Why: why, Fix: fix, Err: err}
}

// Input is an Error whose message is written from its fields, for packages with no sentinel of
// their own: `<path> "<value>" <why>; <fix>`, the value left out when empty (a secret or a missing
// attribute has none worth repeating).
func Input(path, value, why, fix string) *Error {
	msg := fmt.Sprintf("%s %q %s; %s", path, value, why, fix)
	if value == "" {
		msg = fmt.Sprintf("%s %s; %s", path, why, fix)
	}
	return New(path, value, why, fix, errors.New(msg))
}

// WithSupported returns a copy of e that names the accepted range.
func (e *Error) WithSupported(supported string) *Error {
	out := *e
	out.Supported = supported
	return &out
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Under returns a copy of e whose Path is prefixed with parent: a disk check's "size_gib" under
// "data_disks[1]" becomes "data_disks[1].size_gib". The message is unchanged.
func (e *Error) Under(parent string) *Error {
	out := *e
	out.Path = Join(parent, e.Path)
	return &out
}

// At returns a copy of e about another attribute: a CIDR parser's "cidr_block" becomes the
// "vswitch_cidrs" entry the caller was parsing.
func (e *Error) At(path string) *Error {
	out := *e
	out.Path = path
	return &out
}

// Join is the attribute name under parent: Join("kubernetes", "pod_subnet") is
// "kubernetes.pod_subnet". Either may be empty.
func Join(parent, name string) string {
	switch {
	case parent == "":
		return name
	case name == "":
		return parent
	}
	return parent + "." + name
}

// Index is element i of the list at parent: Index("mounts", 2) is "mounts[2]".
func Index(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// Key is the entry key of the map at parent, quoted so a key holding dots or brackets stays one
// step: Key("tags", "a.b") is `tags["a.b"]`.
func Key(parent, key string) string {
	return parent + "[" + strconv.Quote(key) + "]"
}

// As finds the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
