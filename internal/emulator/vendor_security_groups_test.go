package emulator

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func createGroups(t *testing.T, e *env, f fixture, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		wantAnswer(t, e.ecsCall("CreateSecurityGroup", params{"VpcId": f.vpcID, "SecurityGroupName": "g" + strconv.Itoa(i)}), 200, "")
	}
}

// DescribeSecurityGroups pages with MaxResults/NextToken as well as PageSize/PageNumber.
func TestDescribeSecurityGroupsPaging(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	createGroups(t, e, f, 24) // 25 with the fixture's
	type page struct {
		NextToken  string
		TotalCount int
		PageSize   int
		PageNumber int
		// SecurityGroups.SecurityGroup[].SecurityGroupId
		SecurityGroups struct {
			SecurityGroup []struct{ SecurityGroupId string }
		}
	}
	seen := map[string]bool{}
	token := ""
	calls := 0
	for {
		p := params{"MaxResults": "10"}
		if token != "" {
			p["NextToken"] = token
		}
		var pg page
		decodeInto(t, e.ecsCall("DescribeSecurityGroups", p), &pg)
		calls++
		if len(pg.SecurityGroups.SecurityGroup) > 10 {
			t.Fatalf("page of %d with MaxResults 10", len(pg.SecurityGroups.SecurityGroup))
		}
		for _, g := range pg.SecurityGroups.SecurityGroup {
			if seen[g.SecurityGroupId] {
				t.Fatalf("group %s on two pages", g.SecurityGroupId)
			}
			seen[g.SecurityGroupId] = true
		}
		token = pg.NextToken
		if token == "" || calls > 10 {
			break
		}
	}
	if len(seen) != 25 || calls != 3 {
		t.Fatalf("MaxResults/NextToken paging saw %d groups in %d calls, want 25 in 3", len(seen), calls)
	}
	var pg page
	decodeInto(t, e.ecsCall("DescribeSecurityGroups", params{"PageSize": "20", "PageNumber": "2"}), &pg)
	if len(pg.SecurityGroups.SecurityGroup) != 5 || pg.TotalCount != 25 || pg.PageNumber != 2 || pg.PageSize != 20 {
		t.Fatalf("PageSize/PageNumber: %d groups, %+v", len(pg.SecurityGroups.SecurityGroup), pg)
	}
	// Out of range MaxResults is clamped to 100, not refused.
	decodeInto(t, e.ecsCall("DescribeSecurityGroups", params{"MaxResults": "500"}), &pg)
	if len(pg.SecurityGroups.SecurityGroup) != 25 {
		t.Fatalf("MaxResults 500: %d groups", len(pg.SecurityGroups.SecurityGroup))
	}
	wantAnswer(t, e.ecsCall("DescribeSecurityGroups", params{"NextToken": "!!"}), 400, "InvalidNextToken.Malformed")
}

// DescribeSecurityGroupAttribute pages the rules (MaxResults 10-1000, default 500).
func TestDescribeSecurityGroupAttributePaging(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	for i := 1; i <= 25; i++ {
		wantAnswer(t, e.ecsCall("AuthorizeSecurityGroup", params{"SecurityGroupId": f.sgID, "Permissions.1.IpProtocol": "TCP",
			"Permissions.1.PortRange": fmt.Sprintf("%d/%d", i, i), "Permissions.1.SourceCidrIp": "10.0.0.0/8"}), 200, "")
	}
	type page struct {
		NextToken   string
		Permissions struct {
			Permission []struct{ SecurityGroupRuleId string }
		}
	}
	seen := map[string]bool{}
	token, calls := "", 0
	for {
		p := params{"SecurityGroupId": f.sgID, "MaxResults": "10"}
		if token != "" {
			p["NextToken"] = token
		}
		var pg page
		decodeInto(t, e.ecsCall("DescribeSecurityGroupAttribute", p), &pg)
		calls++
		for _, r := range pg.Permissions.Permission {
			seen[r.SecurityGroupRuleId] = true
		}
		if token = pg.NextToken; token == "" || calls > 10 {
			break
		}
	}
	if len(seen) != 25 || calls != 3 {
		t.Fatalf("rule paging saw %d rules in %d calls, want 25 in 3", len(seen), calls)
	}
	// Below the minimum of 10 is clamped up.
	var pg page
	decodeInto(t, e.ecsCall("DescribeSecurityGroupAttribute", params{"SecurityGroupId": f.sgID, "MaxResults": "1"}), &pg)
	if len(pg.Permissions.Permission) != 10 || pg.NextToken == "" {
		t.Fatalf("MaxResults 1: %d rules, token %q", len(pg.Permissions.Permission), pg.NextToken)
	}
}

// CreateSecurityGroup: VpcId is optional at the vendor.
func TestCreateSecurityGroupWithoutVpc(t *testing.T) {
	e := newEnv(t, Config{})
	var g struct{ SecurityGroupId string }
	decodeInto(t, e.ecsCall("CreateSecurityGroup", params{"SecurityGroupName": "classic"}), &g)
	if !strings.HasPrefix(g.SecurityGroupId, "sg-") {
		t.Fatalf("id %q", g.SecurityGroupId)
	}
}
