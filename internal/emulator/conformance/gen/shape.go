package main

import (
	"sort"
	"strings"
)

// shape is the JSON fields a response model allows: nil for a scalar, freeForm for a map or
// interface (copied whole), otherwise an object's fields by wire name.
type shape struct {
	fields map[string]*shape
	free   bool
	shared bool // a struct several actions' answers hold (ess.go), not written
}

var freeForm = &shape{free: true}

// String writes a shape as the emulator's response tables hold it: "{A,B{C,D}}" for objects
// (fields sorted), "" for a scalar, "*" for free-form.
func (s *shape) String() string {
	switch {
	case s == nil:
		return ""
	case s.free:
		return "*"
	}
	fields := make([]string, 0, len(s.fields))
	for name, child := range s.fields {
		fields = append(fields, name+child.String())
	}
	sort.Strings(fields)
	return "{" + strings.Join(fields, ",") + "}"
}
