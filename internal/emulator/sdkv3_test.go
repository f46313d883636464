package emulator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	openapi "github.com/alibabacloud-go/darabonba-openapi/v2/client"
	ecs7 "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"
	"github.com/alibabacloud-go/tea/tea"
	vpc6 "github.com/alibabacloud-go/vpc-20160428/v6/client"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

const (
	testAK     = "emulator"
	testSecret = "emulator-secret"
)

// TestV3WireShape pins what the newer SDK sends in its default configuration,
// the request shape the V3 verifier is written against: an HTTPS POST to "/",
// the action and version in headers, every parameter in the query string, an
// empty body, and an ACS3-HMAC-SHA256 Authorization over host and the x-acs-
// headers.
func TestV3WireShape(t *testing.T) {
	v := newV3Env(t, Config{})
	_, err := v.newECS(testAK, testSecret, "").DescribeZones(&ecs7.DescribeZonesRequest{RegionId: dara.String(testRegion)})
	must(t, err)
	r := v.last()
	if r.method != "POST" || !strings.HasPrefix(r.url, "/?") || !strings.Contains(r.url, "RegionId="+testRegion) || len(r.body) != 0 {
		t.Fatalf("request shape changed: %s %s body=%q", r.method, r.url, r.body)
	}
	if r.header.Get("x-acs-action") != "DescribeZones" || r.header.Get("x-acs-version") != versionECS {
		t.Fatalf("action/version headers: %v", r.header)
	}
	auth := r.header.Get("Authorization")
	for _, want := range []string{"ACS3-HMAC-SHA256 Credential=" + testAK + ",", "SignedHeaders=host;x-acs-action;x-acs-content-sha256;", "x-acs-date;x-acs-signature-nonce;x-acs-version,Signature="} {
		if !strings.Contains(auth, want) {
			t.Fatalf("Authorization %q lacks %q", auth, want)
		}
	}
	if got := r.header.Get("x-acs-content-sha256"); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("x-acs-content-sha256 of an empty body: %s", got)
	}
}

// TestV3SDKDefaultECS drives ECS with the newer SDK's default client: the
// answers must decode into its response models.
func TestV3SDKDefaultECS(t *testing.T) {
	v := newV3Env(t, Config{BootTime: time.Millisecond})
	ec, vc := v.newECS(testAK, testSecret, ""), v.newVPC(testAK, testSecret, "")

	regions, err := ec.DescribeRegions(&ecs7.DescribeRegionsRequest{})
	must(t, err)
	if !containsRegion(regions.Body.Regions.Region, testRegion) || tea.StringValue(regions.Body.RequestId) == "" {
		t.Fatalf("DescribeRegions: %s", regions.Body)
	}
	zones, err := ec.DescribeZones(&ecs7.DescribeZonesRequest{RegionId: dara.String(testRegion)})
	must(t, err)
	if len(zones.Body.Zones.Zone) == 0 || !strings.HasPrefix(tea.StringValue(zones.Body.Zones.Zone[0].ZoneId), testRegion) {
		t.Fatalf("DescribeZones: %s", zones.Body)
	}
	zone := tea.StringValue(zones.Body.Zones.Zone[0].ZoneId)

	vpcID, vswID := v3Network(t, vc, zone)
	sg, err := ec.CreateSecurityGroup(&ecs7.CreateSecurityGroupRequest{RegionId: dara.String(testRegion), VpcId: dara.String(vpcID), SecurityGroupName: dara.String("v3")})
	must(t, err)
	sgID := tea.StringValue(sg.Body.SecurityGroupId)
	if !strings.HasPrefix(sgID, "sg-") {
		t.Fatalf("CreateSecurityGroup: %s", sg.Body)
	}

	run, err := ec.RunInstances(&ecs7.RunInstancesRequest{
		RegionId:        dara.String(testRegion),
		ImageId:         dara.String("ubuntu_22_04_x64_20G_alibase_20240101.vhd"),
		InstanceType:    dara.String("ecs.gn6i-c4g1.xlarge"),
		VSwitchId:       dara.String(vswID),
		SecurityGroupId: dara.String(sgID),
		Amount:          dara.Int32(2),
		InstanceName:    dara.String("v3-node"),
		SystemDisk:      &ecs7.RunInstancesRequestSystemDisk{Category: dara.String("cloud_essd"), Size: dara.String("40")},
		Tag:             []*ecs7.RunInstancesRequestTag{{Key: dara.String("cluster"), Value: dara.String("v3")}},
	})
	must(t, err)
	ids := dara.StringSliceValue(run.Body.InstanceIdSets.InstanceIdSet)
	if len(ids) != 2 {
		t.Fatalf("RunInstances: %s", run.Body)
	}
	idsJSON, _ := json.Marshal(ids)
	desc, err := ec.DescribeInstances(&ecs7.DescribeInstancesRequest{RegionId: dara.String(testRegion), InstanceIds: dara.String(string(idsJSON)), MaxResults: dara.Int32(100)})
	must(t, err)
	got := desc.Body.Instances.Instance
	if len(got) != 2 || tea.StringValue(got[0].InstanceName) != "v3-node" || tea.StringValue(got[0].VpcAttributes.VSwitchId) != vswID ||
		tea.StringValue(got[0].Tags.Tag[0].TagValue) != "v3" || tea.Int32Value(got[0].GPUAmount) != 1 {
		t.Fatalf("DescribeInstances: %s", desc.Body)
	}

	_, err = ec.DeleteInstances(&ecs7.DeleteInstancesRequest{RegionId: dara.String(testRegion), InstanceId: dara.StringSlice(ids), Force: dara.Bool(true)})
	must(t, err)
	desc, err = ec.DescribeInstances(&ecs7.DescribeInstancesRequest{RegionId: dara.String(testRegion), InstanceIds: dara.String(string(idsJSON))})
	must(t, err)
	if n := len(desc.Body.Instances.Instance); n != 0 {
		t.Fatalf("%d instances left after DeleteInstances", n)
	}
	_, err = ec.DeleteInstances(&ecs7.DeleteInstancesRequest{RegionId: dara.String(testRegion), InstanceId: dara.StringSlice(ids), Force: dara.Bool(true)})
	wantV3Code(t, err, "InvalidInstanceId.NotFound")
}

// v3Network creates a VPC, waits for it, and adds a vSwitch, all through the
// newer VPC SDK.
func v3Network(t *testing.T, vc *vpc6.Client, zone string) (vpcID, vswID string) {
	t.Helper()
	cv, err := vc.CreateVpc(&vpc6.CreateVpcRequest{RegionId: dara.String(testRegion), CidrBlock: dara.String("10.0.0.0/16"), VpcName: dara.String("v3")})
	must(t, err)
	vpcID = tea.StringValue(cv.Body.VpcId)
	if !strings.HasPrefix(vpcID, "vpc-") {
		t.Fatalf("CreateVpc: %s", cv.Body)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d, err := vc.DescribeVpcs(&vpc6.DescribeVpcsRequest{RegionId: dara.String(testRegion), VpcId: dara.String(vpcID)})
		must(t, err)
		if len(d.Body.Vpcs.Vpc) != 1 {
			t.Fatalf("DescribeVpcs by id: %s", d.Body)
		}
		if x := d.Body.Vpcs.Vpc[0]; tea.StringValue(x.Status) == "Available" {
			if tea.StringValue(x.CidrBlock) != "10.0.0.0/16" || tea.StringValue(x.VpcName) != "v3" {
				t.Fatalf("DescribeVpcs: %s", d.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vpc %s never became Available", vpcID)
		}
	}
	sw, err := vc.CreateVSwitch(&vpc6.CreateVSwitchRequest{RegionId: dara.String(testRegion), VpcId: dara.String(vpcID), ZoneId: dara.String(zone), CidrBlock: dara.String("10.0.1.0/24")})
	must(t, err)
	vswID = tea.StringValue(sw.Body.VSwitchId)
	if !strings.HasPrefix(vswID, "vsw-") {
		t.Fatalf("CreateVSwitch: %s", sw.Body)
	}
	return vpcID, vswID
}

// TestV3SDKDefaultVPC: a VPC's life through the newer VPC SDK.
func TestV3SDKDefaultVPC(t *testing.T) {
	v := newV3Env(t, Config{})
	vc := v.newVPC(testAK, testSecret, "")
	vpcID, vswID := v3Network(t, vc, testRegion+"-a")
	_, err := vc.DeleteVpc(&vpc6.DeleteVpcRequest{RegionId: dara.String(testRegion), VpcId: dara.String(vpcID)})
	if code := v3Code(err); !strings.HasPrefix(code, "DependencyViolation") {
		t.Fatalf("DeleteVpc with a vSwitch: want DependencyViolation*, got %q (%v)", code, err)
	}
	_, err = vc.DeleteVSwitch(&vpc6.DeleteVSwitchRequest{RegionId: dara.String(testRegion), VSwitchId: dara.String(vswID)})
	must(t, err)
	_, err = vc.DeleteVpc(&vpc6.DeleteVpcRequest{RegionId: dara.String(testRegion), VpcId: dara.String(vpcID)})
	must(t, err)
	d, err := vc.DescribeVpcs(&vpc6.DescribeVpcsRequest{RegionId: dara.String(testRegion), VpcId: dara.String(vpcID)})
	must(t, err)
	if n := len(d.Body.Vpcs.Vpc); n != 0 || tea.Int32Value(d.Body.TotalCount) != 0 {
		t.Fatalf("DescribeVpcs after DeleteVpc: %s", d.Body)
	}
}

// TestV3SDKDefaultNAS: a file system's life through the generic V3 client,
// with parameters both in the query string (as generated clients send them)
// and in a form body. NAS has no newer-SDK module on the module proxy, so the
// answers are decoded into the NAS models of the SDK the provider uses.
func TestV3SDKDefaultNAS(t *testing.T) {
	v := newV3Env(t, Config{})
	c := v.newOpenAPI(testAK, testSecret, "")
	created, err := nasCall(c, "CreateFileSystem", map[string]any{
		"RegionId": testRegion, "FileSystemType": "standard", "StorageType": "Performance",
		"ProtocolType": "NFS", "ZoneId": testRegion + "-a", "Description": "v3 scratch",
	}, false)
	must(t, err)
	var cr nas.CreateFileSystemResponse
	decodeBody(t, created, &cr)
	if cr.FileSystemId == "" || cr.RequestId == "" {
		t.Fatalf("CreateFileSystem: %v", created)
	}
	for _, inBody := range []bool{false, true} {
		described, err := nasCall(c, "DescribeFileSystems", map[string]any{"RegionId": testRegion, "FileSystemId": cr.FileSystemId}, inBody)
		must(t, err)
		var dr nas.DescribeFileSystemsResponse
		decodeBody(t, described, &dr)
		if len(dr.FileSystems.FileSystem) != 1 || dr.FileSystems.FileSystem[0].Description != "v3 scratch" || dr.FileSystems.FileSystem[0].ProtocolType != "NFS" {
			t.Fatalf("DescribeFileSystems (params in body: %v): %v", inBody, described)
		}
	}
	_, err = nasCall(c, "DeleteFileSystem", map[string]any{"RegionId": testRegion, "FileSystemId": cr.FileSystemId}, true)
	must(t, err)
	// Gone: either refused as not found or listed no more.
	gone, err := nasCall(c, "DescribeFileSystems", map[string]any{"RegionId": testRegion, "FileSystemId": cr.FileSystemId}, false)
	if code := v3Code(err); code != "" {
		if code != "InvalidFileSystem.NotFound" {
			t.Fatalf("DescribeFileSystems after delete: %v", err)
		}
		return
	}
	var dr nas.DescribeFileSystemsResponse
	decodeBody(t, gone, &dr)
	if len(dr.FileSystems.FileSystem) != 0 {
		t.Fatalf("file system still listed after DeleteFileSystem: %v", gone)
	}
}

// decodeBody decodes the "body" of a generic client answer into a model.
func decodeBody(t *testing.T, answer map[string]any, into any) {
	t.Helper()
	b, err := json.Marshal(answer["body"])
	must(t, err)
	must(t, json.Unmarshal(b, into))
}

// TestV3SignatureChecks: the V1 negative cases, signed the V3 way, with the
// newer SDK where it can produce the case and a replayed or altered copy of
// its request where it cannot.
func TestV3SignatureChecks(t *testing.T) {
	v := newV3Env(t, Config{})
	regions := &ecs7.DescribeRegionsRequest{}

	_, err := v.newECS("nobody", "x", "").DescribeRegions(regions)
	wantV3Code(t, err, "InvalidAccessKeyId.NotFound")
	_, err = v.newECS(testAK, "wrong", "").DescribeRegions(regions)
	wantV3Code(t, err, "SignatureDoesNotMatch")

	v.s.clockSkew.Store(int64(20 * time.Minute))
	_, err = v.newECS(testAK, testSecret, "").DescribeRegions(regions)
	v.s.clockSkew.Store(0)
	wantV3Code(t, err, "InvalidTimeStamp.Expired")

	// A good request, then the same bytes again: the nonce is spent.
	_, err = v.newECS(testAK, testSecret, "").DescribeZones(&ecs7.DescribeZonesRequest{RegionId: dara.String(testRegion)})
	must(t, err)
	good := v.last()
	if code, status := v.send(good); code != "SignatureNonceUsed" || status != 400 {
		t.Fatalf("replay: %s %d", code, status)
	}

	fresh := func(alter func(r *recordedRequest)) recordedRequest {
		r := good
		r.header = good.header.Clone()
		r.header.Set("x-acs-signature-nonce", "unsigned-"+newRequestID()) // breaks the signature unless alter re-checks earlier
		alter(&r)
		return r
	}
	cases := []struct {
		name, want string
		alter      func(r *recordedRequest)
	}{
		{"no Authorization", "IncompleteSignature", func(r *recordedRequest) { r.header.Del("Authorization") }},
		{"malformed Authorization", "IncompleteSignature", func(r *recordedRequest) { r.header.Set("Authorization", "ACS3-HMAC-SHA256 garbage") }},
		{"other algorithm", "InvalidParameter", func(r *recordedRequest) {
			r.header.Set("Authorization", strings.Replace(r.header.Get("Authorization"), "ACS3-HMAC-SHA256", "ACS3-HMAC-SM3", 1))
		}},
		{"missing x-acs-date", "MissingParameter", func(r *recordedRequest) { r.header.Del("x-acs-date") }},
		{"missing x-acs-content-sha256", "MissingParameter", func(r *recordedRequest) { r.header.Del("x-acs-content-sha256") }},
		{"nonce not signed", "IncompleteSignature", func(r *recordedRequest) {
			r.header.Set("Authorization", strings.Replace(r.header.Get("Authorization"), "x-acs-signature-nonce;", "", 1))
		}},
		{"bad date format", "InvalidTimeStamp.Format", func(r *recordedRequest) { r.header.Set("x-acs-date", "yesterday") }},
		{"body not matching its hash", "SignatureDoesNotMatch", func(r *recordedRequest) { r.body = []byte("RegionId=cn-beijing") }},
		{"altered nonce", "SignatureDoesNotMatch", func(r *recordedRequest) {}},
		{"altered query", "SignatureDoesNotMatch", func(r *recordedRequest) {
			r.url = strings.Replace(r.url, "RegionId="+testRegion, "RegionId=cn-beijing", 1)
		}},
	}
	for _, tc := range cases {
		if code, _ := v.send(fresh(tc.alter)); code != tc.want {
			t.Errorf("%s: want %s, got %q", tc.name, tc.want, code)
		}
	}
	st := v.s.Stats()
	if st.Errors["SignatureDoesNotMatch"] < 4 || st.Errors["SignatureNonceUsed"] != 1 || st.Errors["IncompleteSignature"] != 3 {
		t.Fatalf("stats: %+v", st.Errors)
	}
}

// TestV3STSCredentials: temporary keys from AssumeRole sign V3 requests with
// x-acs-security-token; a forged or missing token is refused as for V1.
func TestV3STSCredentials(t *testing.T) {
	v := newV3Env(t, Config{})
	a := sts.CreateAssumeRoleRequest()
	a.RoleArn, a.RoleSessionName = "acs:ram::1234567890:role/gpucluster-admin", "v3"
	resp, err := v.sts.AssumeRole(a)
	must(t, err)
	c := resp.Credentials
	zones := &ecs7.DescribeZonesRequest{RegionId: dara.String(testRegion)}

	_, err = v.newECS(c.AccessKeyId, c.AccessKeySecret, c.SecurityToken).DescribeZones(zones)
	must(t, err)
	if r := v.last(); r.header.Get("x-acs-security-token") != c.SecurityToken || !strings.Contains(r.header.Get("Authorization"), "x-acs-security-token") {
		t.Fatalf("the SDK did not sign its security token: %v", r.header)
	}
	_, err = v.newECS(c.AccessKeyId, c.AccessKeySecret, "forged").DescribeZones(zones)
	wantV3Code(t, err, "InvalidSecurityToken.MismatchWithAccessKey")
	_, err = v.newECS(c.AccessKeyId, c.AccessKeySecret, "").DescribeZones(zones)
	wantV3Code(t, err, "MissingSecurityToken")
	_, err = v.newECS(c.AccessKeyId, "wrong", c.SecurityToken).DescribeZones(zones)
	wantV3Code(t, err, "SignatureDoesNotMatch")
	v.s.clockSkew.Store(int64(2 * time.Hour))
	_, err = v.newECS(c.AccessKeyId, c.AccessKeySecret, c.SecurityToken).DescribeZones(zones)
	v.s.clockSkew.Store(0)
	wantV3Code(t, err, "InvalidSecurityToken.Expired")
}

func containsRegion(rs []*ecs7.DescribeRegionsResponseBodyRegionsRegion, id string) bool {
	for _, r := range rs {
		if tea.StringValue(r.RegionId) == id {
			return true
		}
	}
	return false
}

// TestV3ROAStyleAndEncoding: a ROA-style V3 request (path segments, JSON body)
// and query values that need RFC 3986 encoding are verified the way the SDK
// signs them. The emulator routes by x-acs-action and x-acs-version, so the
// ROA-style call lands on the ECS handler it names.
func TestV3ROAStyleAndEncoding(t *testing.T) {
	v := newV3Env(t, Config{})
	// Generated ROA clients send path parameters already encoded.
	path := "/zones/" + core.PercentEncode("a b*c~d/é")
	roa := func(secret string) error {
		_, err := v.newOpenAPI(testAK, secret, "").CallApi(&openapi.Params{
			Action: dara.String("DescribeZones"), Version: dara.String(versionECS), Protocol: dara.String("HTTPS"),
			Pathname: dara.String(path), Method: dara.String("PUT"), AuthType: dara.String("AK"),
			Style: dara.String("ROA"), ReqBodyType: dara.String("json"), BodyType: dara.String("json"),
		}, &openapi.OpenApiRequest{
			Query: map[string]*string{"RegionId": dara.String(testRegion), "Note": dara.String("x y*z~é/+&=")},
			Body:  map[string]any{"anything": []int{1, 2}},
		}, &dara.RuntimeOptions{})
		return err
	}
	must(t, roa(testSecret))
	if r := v.last(); r.method != "PUT" || !strings.HasPrefix(r.url, "/zones/") || len(r.body) == 0 {
		t.Fatalf("not a ROA-style request: %s %s body=%q", r.method, r.url, r.body)
	}
	wantV3Code(t, roa("wrong"), "SignatureDoesNotMatch")

	// An RPC value with every character class the canonical query escapes
	// differently from form encoding, stored and read back intact.
	ec := v.newECS(testAK, testSecret, "")
	desc := "a b*c~d é/+&=%"
	vc := v.newVPC(testAK, testSecret, "")
	cv, err := vc.CreateVpc(&vpc6.CreateVpcRequest{RegionId: dara.String(testRegion), CidrBlock: dara.String("10.0.0.0/16"), Description: dara.String(desc)})
	must(t, err)
	sg, err := ec.CreateSecurityGroup(&ecs7.CreateSecurityGroupRequest{RegionId: dara.String(testRegion), VpcId: cv.Body.VpcId, Description: dara.String(desc)})
	must(t, err)
	got, err := ec.DescribeSecurityGroupAttribute(&ecs7.DescribeSecurityGroupAttributeRequest{RegionId: dara.String(testRegion), SecurityGroupId: sg.Body.SecurityGroupId})
	must(t, err)
	if d := tea.StringValue(got.Body.Description); d != desc {
		t.Fatalf("description came back as %q", d)
	}
}

// TestV3SDKOverPlainHTTP: the configuration the emulator guide gives users of
// the newer SDKs (the program serves plain HTTP): endpoint plus Protocol HTTP.
func TestV3SDKOverPlainHTTP(t *testing.T) {
	e := newEnv(t, Config{})
	c, err := ecs7.NewClient(&openapi.Config{
		AccessKeyId:     tea.String(testAK),
		AccessKeySecret: tea.String(testSecret),
		RegionId:        tea.String(testRegion),
		Endpoint:        tea.String(e.host),
		Protocol:        tea.String("HTTP"),
	})
	must(t, err)
	regions, err := c.DescribeRegions(&ecs7.DescribeRegionsRequest{})
	must(t, err)
	if !containsRegion(regions.Body.Regions.Region, testRegion) {
		t.Fatalf("DescribeRegions: %s", regions.Body)
	}
}
