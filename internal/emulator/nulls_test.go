package emulator

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
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

// noNulls fails the test for each null in a decoded answer.
func noNulls(t testing.TB, doc any) {
	t.Helper()
	for _, p := range nullPaths(doc, "") {
		t.Errorf("answer field %s is null: the vendor sends an empty list as [] inside its wrapper object, never null", p)
	}
}

// TestEmptyListsOnTheWire checks the vendor's own sample: a VPC without NAT gateways or user
// CIDRs answers "NatGatewayIds":{"NatGatewayIds":[]} and "UserCidrs":{"UserCidr":[]} (DescribeVpcs
// reference above), and an ESS scaling group without tags or load balancers answers its lists the
// same way.
func TestEmptyListsOnTheWire(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.essGroup(0, 1, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)
	vpcs := e.rpc(versionVPC, "DescribeVpcs", params{"RegionId": testRegion, "VpcId": f.vpcID})
	groups := e.rpc(versionESS, "DescribeScalingGroups", params{"RegionId": testRegion, "ScalingGroupId.1": f.group})
	for _, c := range []struct {
		answer rpcAnswer
		want   []string
	}{
		{vpcs, []string{`"NatGatewayIds":{"NatGatewayIds":[]}`, `"UserCidrs":{"UserCidr":[]}`}},
		{groups, []string{`"Tags":{"Tag":[]}`, `"LoadBalancerIds":{"LoadBalancerId":[]}`}},
	} {
		wantAnswer(t, c.answer, 200, "")
		for _, w := range c.want {
			if !strings.Contains(string(c.answer.body), w) {
				t.Errorf("answer lacks %s: %s", w, c.answer.body)
			}
		}
		noNulls(t, decodeJSON(t, c.answer.body))
	}
}
