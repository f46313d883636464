package core

import (
	"maps"
	"slices"
	"strings"
)

// DefaultResourceGroup is the resource group every record is in: the emulator models one.
const DefaultResourceGroup = "rg-emulator-default"

// SortedKeys answers a map's keys in order: the order the vendor's lists keep, and a fixed
// order for checks that report the first of several offenders.
func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// OneOf refuses v unless it is one of allowed, as the vendor's InvalidParameter does.
func OneOf(name, v string, allowed ...string) *Error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return Errf(400, "InvalidParameter", "The specified parameter %q is not valid: %q is not one of %s.", name, v, strings.Join(allowed, ", "))
}

// MatchParam says whether a record's value have passes the filter parameter name: an absent
// filter passes everything.
func MatchParam(p Params, name, have string) bool {
	return p[name] == "" || p[name] == have
}
