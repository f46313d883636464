package emulator

import (
	"encoding/json"
	"sort"
	"strconv"
	"testing"
)

// The vendor sends an empty repeated field as an empty list inside its wrapper object, never as
// null: the DescribeVpcs reference's sample answer has "NatGatewayIds": {"NatGatewayIds": []}
// and "UserCidrs": {"UserCidr": []} for a VPC without either
// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describevpcs).
// A Go SDK struct decodes both, but a client that walks the JSON (aliyun-cli's output, jq, a
// language whose decoder does not turn null into an empty list) breaks on null. encoding/json
// writes a nil slice as null, so an answer built from an SDK struct with a list left nil carries
// one: nullPaths finds them.

// nullPaths lists the paths of the JSON nulls in a decoded answer, sorted.
func nullPaths(doc any, path string) []string {
	var out []string
	switch v := doc.(type) {
	case nil:
		return []string{path}
	case map[string]any:
		for k, sub := range v {
			out = append(out, nullPaths(sub, path+"."+k)...)
		}
	case []any:
		for i, sub := range v {
			out = append(out, nullPaths(sub, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	sort.Strings(out)
	return out
}

func decodeJSON(t testing.TB, body []byte) any {
	t.Helper()
	var doc any
	must(t, json.Unmarshal(body, &doc))
	return doc
}
