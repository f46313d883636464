package emulator

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
)

// Format=XML is answered in XML, errors included.
func TestFormatXML(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	a := e.ecsCall("DescribeSecurityGroups", params{"Format": "XML"})
	if a.status != 200 {
		t.Fatalf("%v", a)
	}
	var out struct {
		XMLName        xml.Name `xml:"DescribeSecurityGroupsResponse"`
		RequestId      string
		TotalCount     int
		SecurityGroups struct {
			SecurityGroup []struct{ SecurityGroupId, VpcId string }
		}
	}
	if err := xml.Unmarshal(a.body, &out); err != nil {
		t.Fatalf("not XML: %v: %s", err, a.body)
	}
	if out.RequestId == "" || out.TotalCount != 1 || len(out.SecurityGroups.SecurityGroup) != 1 || out.SecurityGroups.SecurityGroup[0].VpcId != f.vpcID {
		t.Fatalf("XML answer: %+v from %s", out, a.body)
	}
	bad := e.ecsCall("DescribeSecurityGroupAttribute", params{"Format": "XML", "SecurityGroupId": "sg-nope"})
	if bad.status != 404 || bad.code != "InvalidSecurityGroupId.NotFound" {
		t.Fatalf("XML error: %v", bad)
	}
	if !strings.HasPrefix(string(bad.body), "<?xml") {
		t.Fatalf("XML error body: %s", bad.body)
	}
}

// Stock-outs: OperationDenied.NoStock by default, and Zone.NotOnSale or
// InvalidResourceType.NotSupported where a zone or type is marked so through the admin API.
func TestStockOutCodes(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	run := func() rpcAnswer {
		p := runParams(f)
		delete(p, "DryRun")
		return e.ecsCall("RunInstances", p)
	}
	e.s.SetCapacity(map[string]map[string]int{f.zone: {"ecs.gn6i-c4g1.xlarge": 0}})
	wantAnswer(t, run(), 403, "OperationDenied.NoStock")
	must(t, e.s.SetUnavailable(map[string]map[string]string{f.zone: {"*": "Zone.NotOnSale"}}))
	e.s.SetCapacity(nil)
	wantAnswer(t, run(), 403, "Zone.NotOnSale")
	must(t, e.s.SetUnavailable(map[string]map[string]string{f.zone: {"ecs.gn6i-c4g1.xlarge": "InvalidResourceType.NotSupported"}}))
	wantAnswer(t, run(), 403, "InvalidResourceType.NotSupported")
	if err := e.s.SetUnavailable(map[string]map[string]string{f.zone: {"*": "Bogus"}}); err == nil {
		t.Fatal("an unknown stock-out code was accepted")
	}
	// Through the admin API, and shown as sold out by DescribeAvailableResource.
	req, _ := http.NewRequest(http.MethodPut, e.srv.URL+"/_emulator/unavailable",
		strings.NewReader(`{"`+f.zone+`":{"ecs.gn6i-c4g1.xlarge":"Zone.NotOnSale"}}`))
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin PUT: %d", resp.StatusCode)
	}
	wantAnswer(t, run(), 403, "Zone.NotOnSale")
	res := supportedInstanceTypes(t, e.ecsCall("DescribeAvailableResource", params{"DestinationResource": "InstanceType",
		"ZoneId": f.zone, "InstanceType": "ecs.gn6i-c4g1.xlarge"}))
	if s := res[0]; s.Status != "SoldOut" {
		t.Fatalf("unavailable type shown as %+v", s)
	}
}

// A ClientToken reused with other parameters is refused as the vendor does.
func TestIdempotentParameterMismatch(t *testing.T) {
	e := newEnv(t, Config{})
	wantAnswer(t, e.rpc(versionVPC, "CreateVpc", params{"RegionId": testRegion, "CidrBlock": "10.0.0.0/16", "ClientToken": "t1"}), 200, "")
	wantAnswer(t, e.rpc(versionVPC, "CreateVpc", params{"RegionId": testRegion, "CidrBlock": "10.1.0.0/16", "ClientToken": "t1"}), 400, "IdempotentParameterMismatch")
}
