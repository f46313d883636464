package emulator

import (
	"reflect"
	"strings"
)

// Counts is the number of live resources of each kind in r, keyed by the
// kind's name in the /_emulator/resources JSON; kinds with none are left out.
// A test that checks nothing leaked compares it with an empty map, and so
// keeps covering every kind the emulator gains later.
func (r Resources) Counts() map[string]int {
	out := map[string]int{}
	v, t := reflect.ValueOf(r), reflect.TypeOf(r)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if n := v.Field(i).Len(); n > 0 {
			out[name] = n
		}
	}
	return out
}
