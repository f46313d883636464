package core

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Params holds every request parameter (query string and form body merged).
type Params map[string]string

// Required answers the parameter k, or MissingParameter when it is absent or empty.
func (p Params) Required(k string) (string, *Error) {
	v := p[k]
	if v == "" {
		return "", ErrMissing(k)
	}
	return v, nil
}

// Int answers the integer parameter k, def when it is absent.
func (p Params) Int(k string, def int) (int, *Error) {
	v, ok := p[k]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, ErrInvalid(k, "%q is not an integer", v)
	}
	return n, nil
}

// Bool answers the boolean parameter k, def when it is absent.
func (p Params) Bool(k string, def bool) (bool, *Error) {
	v, ok := p[k]
	if !ok || v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, ErrInvalid(k, "%q is not a boolean", v)
	}
	return b, nil
}

// Indexed collects "Prefix.N" (when sub == "") or "Prefix.N.Sub" values keyed by N,
// so sparse or unordered numbering still works.
func (p Params) Indexed(prefix string) map[int]map[string]string {
	out := map[int]map[string]string{}
	pre := prefix + "."
	for k, v := range p {
		if !strings.HasPrefix(k, pre) {
			continue
		}
		rest := k[len(pre):]
		num, sub, _ := strings.Cut(rest, ".")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 {
			continue
		}
		m := out[n]
		if m == nil {
			m = map[string]string{}
			out[n] = m
		}
		m[sub] = v
	}
	return out
}

// StructList returns "Prefix.N.Field" groups ordered by N.
func (p Params) StructList(prefix string) []map[string]string {
	idx := p.Indexed(prefix)
	keys := make([]int, 0, len(idx))
	for k := range idx {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := make([]map[string]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, idx[k])
	}
	return out
}

// List returns "Prefix.N" scalar values ordered by N.
func (p Params) List(prefix string) []string {
	var out []string
	for _, m := range p.StructList(prefix) {
		if v, ok := m[""]; ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// JSONList decodes a JSON array string parameter such as InstanceIds.
func (p Params) JSONList(k string) ([]string, *Error) {
	v := p[k]
	if v == "" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, ErrInvalid(k, "must be a JSON array of strings")
	}
	return out, nil
}

// IDs accepts either the JSON-array form (InstanceIds) or the repeated form (InstanceId.N),
// whichever the caller sent.
func (p Params) IDs(jsonName, repeated string) ([]string, *Error) {
	if p[jsonName] != "" {
		return p.JSONList(jsonName)
	}
	return p.List(repeated), nil
}

// commonParams are the parameters every RPC call carries for its signature and encoding, not
// for the action: they change on every retry.
var commonParams = map[string]bool{
	"Signature": true, "SignatureNonce": true, "Timestamp": true, "AccessKeyId": true,
	"SecurityToken": true, "SignatureMethod": true, "SignatureVersion": true,
	"SignatureType": true, "Format": true, "ClientToken": true,
}

// IsCommonParam says whether k is one of those parameters: the idempotency hash leaves them out,
// and so does a launch template keeping a request's parameters.
func IsCommonParam(k string) bool { return commonParams[k] }
