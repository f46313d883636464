package ecs

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The stock tables the emulator's admin endpoints set (/_emulator/capacity, unavailable,
// no_spot) and RunInstances and DescribeAvailableResource read. The Server checks and copies a
// table with the functions below and sets it on the store under its write lock.

// StockTable copies a zone -> instance type -> count table with the type names normalized.
func StockTable(c map[string]map[string]int) map[string]map[string]int {
	cp := map[string]map[string]int{}
	for z, m := range c {
		cp[z] = map[string]int{}
		for t, n := range m {
			cp[z][normalizeType(t)] = n
		}
	}
	return cp
}

// StockOutCodes are the answers the vendor gives RunInstances when a zone cannot supply a type:
// out of stock for now, the zone not selling, or the type not sold there.
var StockOutCodes = []string{"OperationDenied.NoStock", "Zone.NotOnSale", "InvalidResourceType.NotSupported"}

// UnavailableTable checks and copies a table of types zones do not sell at all: zone -> instance
// type ("*" for every type) -> the code RunInstances answers there (one of StockOutCodes, HTTP
// 403), whatever the capacity table says.
func UnavailableTable(m map[string]map[string]string) (map[string]map[string]string, error) {
	cp := map[string]map[string]string{}
	for z, types := range m {
		cp[z] = map[string]string{}
		for t, code := range types {
			if !slices.Contains(StockOutCodes, code) {
				return nil, fmt.Errorf("zone %s, type %s: code %q is not one of %s", z, t, code, strings.Join(StockOutCodes, ", "))
			}
			if t != "*" {
				t = normalizeType(t)
			}
			cp[z][t] = code
		}
	}
	return cp, nil
}

// unavailable answers the stock-out code of a type in a zone the zone does not sell ("" when it does).
func (d *Store) unavailable(zone, typ string) string {
	z := d.Unavailable[zone]
	if code := z[typ]; code != "" {
		return code
	}
	return z["*"]
}

// NoSpotCode is what RunInstances (and so an ESS launch) answers for spot of a type the vendor
// sells pay-as-you-go only: the type is not sold that way in the zone. The vendor documents no
// code of its own for this case; the emulator's choice is the stock-out code that says "this
// resource is not sold here" rather than "sold out for now", so a retry does not help.
const NoSpotCode = "InvalidResourceType.NotSupported"

// NoSpotList checks and sorts a list of instance types with no spot offer in any zone: spot
// launches of them fail with NoSpotCode and DescribeAvailableResource asked with a SpotStrategy
// leaves them out.
func NoSpotList(typesList []string) ([]string, error) {
	cp := make([]string, 0, len(typesList))
	for _, t := range typesList {
		n := normalizeType(t)
		if instanceTypes[n] == nil {
			return nil, fmt.Errorf("instance type %q is not in the emulator's catalog", t)
		}
		cp = append(cp, n)
	}
	sort.Strings(cp)
	return cp, nil
}

// spotless says whether a type has no spot offer (NoSpotList).
func (d *Store) spotless(typ string) bool { return slices.Contains(d.NoSpot, typ) }
