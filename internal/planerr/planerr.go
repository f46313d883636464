// Package planerr is the error the pure planning packages (catalog, storageplan, netplan,
// poolplan) return when what the user asked for cannot be planned. It carries, as data, the
// attribute the bad value came from, the value, why it is wrong and how to fix it, so the
// provider can point its diagnostic at the attribute without reading the message.
package planerr

import (
	"errors"
	"strings"
)

// Error is a mistake in user input found while planning.
//
// Path is the attribute relative to the object the planning function was given, in Terraform's
// attribute names, nested names joined by dots: "min_iops" and "object_lifecycle.ia_after_days"
// on a storage tier, "gpus_per_node" on a node pool, "size_gib" on one disk block (the caller
// knows which disk and puts its own path in front, see Under).
//
// Error() is the message the planning package has always written (callers and tests may show it
// whole); Why and Fix are its two halves as data, for a diagnostic that states them apart.
type Error struct {
	Path  string
	Value string
	Why   string
	Fix   string
	// Err is the full message. It wraps the package's sentinel (catalog.ErrInvalidDisk,
	// storageplan.ErrInvalid, ...), so errors.Is keeps working through an *Error.
	Err error
}

// New ties err, the message, to the attribute at path.
func New(path, value, why, fix string, err error) *Error {
	return &Error{Path: path, Value: value, Why: why, Fix: fix, Err: err}
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Steps splits Path into attribute names: "object_lifecycle.ia_after_days" gives
// ["object_lifecycle", "ia_after_days"].
func (e *Error) Steps() []string {
	if e.Path == "" {
		return nil
	}
	return strings.Split(e.Path, ".")
}

// Under returns a copy of e whose Path is prefixed with parent: a disk check's "size_gib" under
// "data_disks[1]" becomes "data_disks[1].size_gib".
func (e *Error) Under(parent string) *Error {
	out := *e
	if parent != "" {
		out.Path = parent + "." + e.Path
	}
	return &out
}

// At returns a copy of e about another attribute: a CIDR parser's "cidr_block" becomes the
// "vswitch_cidrs" entry the caller was parsing.
func (e *Error) At(path string) *Error {
	out := *e
	out.Path = path
	return &out
}

// As finds the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
