package core

import "reflect"

// The vendor sends a repeated field with no entries as an empty list inside its wrapper object,
// never as null: the DescribeVpcs reference's sample answer carries "NatGatewayIds":
// {"NatGatewayIds": []} and "UserCidrs": {"UserCidr": []} for a VPC without either
// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describevpcs).
// Answers are built from the aliyun SDK's structs, which have no omitempty, and encoding/json
// writes a list the handler left nil as null; a client that walks the JSON (aliyun-cli's output
// and its --output filters, jq, a decoder that keeps null apart from an empty list) breaks on it.

// EmptyLists replaces every nil slice reachable from v (a pointer to an answer struct) with an
// empty one, so the answer encodes [] where the vendor sends it. Slices of structs are walked
// into; nil pointers, maps and interfaces are left as they are (a struct with omitempty fields,
// such as the alibabacloud-go models, leaves an empty list out either way).
func EmptyLists(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	fillLists(rv.Elem())
}

func fillLists(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			fillLists(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				fillLists(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			if v.CanSet() {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		if walksInto(v.Type().Elem()) {
			for i := 0; i < v.Len(); i++ {
				fillLists(v.Index(i))
			}
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillLists(v.Index(i))
		}
	}
}

// walksInto reports whether values of t can hold a slice: lists of strings or numbers need no
// walk (the hot lists of ids and addresses).
func walksInto(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Struct, reflect.Slice, reflect.Array:
		return true
	}
	return false
}
