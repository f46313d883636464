package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// apiError is an error answered in the vendor's RPC error shape. Status and
// Code follow the vendor's RPC error format: a non-2xx status with a JSON body of
// RequestId, HostId, Code, Message and Recommend (400 MissingParameter,
// InvalidParameter, Throttling.User, IncompleteSignature; 403 Forbidden.RAM,
// IncorrectInstanceStatus, SignatureDoesNotMatch; 404 InvalidAccessKeyId.NotFound;
// 500 InternalError; 503 ServiceUnavailable). Where
// the vendor does not state a status (stock, quota, dependency errors) the choice
// is documented at the constructor.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func errf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func errMissing(name string) *apiError {
	return errf(400, "MissingParameter", "The input parameter %q that is mandatory for processing this request is not supplied.", name)
}

func errInvalid(name, format string, args ...any) *apiError {
	return errf(400, "InvalidParameter", "The specified parameter %q is not valid: %s", name, fmt.Sprintf(format, args...))
}

// errNotFound answers 404 with a vendor-style "<What>.NotFound" code.
func errNotFound(code, id string) *apiError {
	return errf(404, code, "The specified resource %q does not exist.", id)
}

// errDependency is answered when a resource is still in use. The vendor's error
// reference does not state its status; the VPC API answers 400, so the emulator does.
func errDependency(format string, args ...any) *apiError {
	return errf(400, "DependencyViolation", format, args...)
}

func errStatus(format string, args ...any) *apiError {
	return errf(403, "IncorrectInstanceStatus", format, args...)
}

// errorBody is the vendor's JSON error document.
type errorBody struct {
	RequestId string `json:"RequestId"`
	HostId    string `json:"HostId"`
	Code      string `json:"Code"`
	Message   string `json:"Message"`
	Recommend string `json:"Recommend"`
}

func writeAPIError(w http.ResponseWriter, e *apiError, requestID, host string) {
	body, _ := json.Marshal(errorBody{
		RequestId: requestID,
		HostId:    host,
		Code:      e.Code,
		Message:   e.Message,
		Recommend: "https://api.aliyun.com/troubleshoot?q=" + e.Code,
	})
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// params holds every request parameter (query string and form body merged).
type params map[string]string

func (p params) required(k string) (string, *apiError) {
	v := p[k]
	if v == "" {
		return "", errMissing(k)
	}
	return v, nil
}

func (p params) intv(k string, def int) (int, *apiError) {
	v, ok := p[k]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errInvalid(k, "%q is not an integer", v)
	}
	return n, nil
}

func (p params) boolv(k string, def bool) (bool, *apiError) {
	v, ok := p[k]
	if !ok || v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errInvalid(k, "%q is not a boolean", v)
	}
	return b, nil
}

// indexed collects "Prefix.N" (when sub == "") or "Prefix.N.Sub" values keyed by N,
// so sparse or unordered numbering still works.
func (p params) indexed(prefix string) map[int]map[string]string {
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

// structList returns "Prefix.N.Field" groups ordered by N.
func (p params) structList(prefix string) []map[string]string {
	idx := p.indexed(prefix)
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

// list returns "Prefix.N" scalar values ordered by N.
func (p params) list(prefix string) []string {
	var out []string
	for _, m := range p.structList(prefix) {
		if v, ok := m[""]; ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// jsonList decodes a JSON array string parameter such as InstanceIds.
func (p params) jsonList(k string) ([]string, *apiError) {
	v := p[k]
	if v == "" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, errInvalid(k, "must be a JSON array of strings")
	}
	return out, nil
}

// idsParam accepts either the JSON-array form (InstanceIds) or the repeated
// form (InstanceId.N), whichever the caller sent.
func (p params) idsParam(jsonName, repeated string) ([]string, *apiError) {
	if p[jsonName] != "" {
		return p.jsonList(jsonName)
	}
	return p.list(repeated), nil
}

// tag is one key/value pair; kept tiny because every instance carries a few.
type tag struct {
	K string `json:"k"`
	V string `json:"v,omitempty"`
}

// tagsParam reads Tag.N.Key / Tag.N.Value (at most 20 as the vendor allows).
func (p params) tagsParam(prefix string) ([]tag, *apiError) {
	var out []tag
	for _, m := range p.structList(prefix) {
		k := m["Key"]
		if k == "" {
			if m["Value"] != "" {
				return nil, errMissing(prefix + ".N.Key")
			}
			continue
		}
		out = append(out, tag{K: k, V: m["Value"]})
	}
	if len(out) > 20 {
		return nil, errf(400, "InvalidTagCount", "The number of tags (%d) exceeds 20.", len(out))
	}
	return out, nil
}

// setTags returns a new slice (instances created together share one tag
// slice, so it must never be changed in place).
func setTags(cur []tag, add []tag) []tag {
	cur = append([]tag(nil), cur...)
	for _, t := range add {
		found := false
		for i := range cur {
			if cur[i].K == t.K {
				cur[i].V = t.V
				found = true
				break
			}
		}
		if !found {
			cur = append(cur, t)
		}
	}
	return cur
}

func removeTags(cur []tag, keys []string, all bool) []tag {
	if all {
		return nil
	}
	var out []tag
	for _, t := range cur {
		keep := true
		for _, k := range keys {
			if t.K == k {
				keep = false
			}
		}
		if keep {
			out = append(out, t)
		}
	}
	return out
}

// matchTags reports whether have satisfies every filter (a filter with an
// empty value matches any value of that key).
func matchTags(have []tag, filters []tag) bool {
	for _, f := range filters {
		ok := false
		for _, t := range have {
			if t.K == f.K && (f.V == "" || t.V == f.V) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func tagMap(ts []tag) map[string]string {
	m := make(map[string]string, len(ts))
	for _, t := range ts {
		m[t.K] = t.V
	}
	return m
}
