package emulator

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// The vendor publishes a darabonba client for STS (sts-20150401), SLB (slb-20140515), ESS
// (ess-20140828 for the API the Cluster Autoscaler calls; ess-20220222 for the newer API
// version, which the emulator does not serve) and NAS (nas-20170626), but the Go module proxy
// serves none of them, so these tests call the emulator through the darabonba core every one of
// them wraps (github.com/alibabacloud-go/darabonba-openapi/v2) with the parameters the generated
// client passes, and decode the answers into the products' models of the SDK the provider uses.

// darabonbaAnswer holds one darabonba answer to the vendor's wire model: an HTTP 200 body with
// no null, carrying no field the action's generated response model lacks (where the emulator has
// one, see pruneAnswer), decoded into an SDK response model.
func darabonbaAnswer(t *testing.T, key string, answer map[string]any, err error, into any) {
	t.Helper()
	must(t, err)
	if code := fmt.Sprint(answer["statusCode"]); code != "200" {
		t.Fatalf("%s: HTTP %v", key, answer["statusCode"])
	}
	noNulls(t, answer["body"])
	if tree := responseTrees[key]; tree != nil {
		if extra := extraShapeFields(answer["body"], tree, ""); len(extra) > 0 {
			t.Errorf("%s answers fields its vendor model lacks: %v", key, extra)
		}
	}
	decodeBody(t, answer, into)
}

// TestDarabonbaSTS: GetCallerIdentity with a long-term key and with an assumed role's key, and
// AssumeRole's refusal of a malformed role ARN, through the darabonba core V3-signed as
// sts-20150401's generated client sends them.
func TestDarabonbaSTS(t *testing.T) {
	v := newV3Env(t, Config{})
	c := v.newOpenAPI(testAK, testSecret, "")
	answer, err := rpcV3(c, versionSTS, "GetCallerIdentity", map[string]any{}, false)
	var id sts.GetCallerIdentityResponse
	darabonbaAnswer(t, versionSTS+"/GetCallerIdentity", answer, err, &id)
	if id.IdentityType != "Account" || id.AccountId != core.AccountID || id.Arn != "acs:ram::"+core.AccountID+":root" {
		t.Fatalf("GetCallerIdentity of the account's key: %+v", id)
	}

	answer, err = rpcV3(c, versionSTS, "AssumeRole", map[string]any{
		"RoleArn": "acs:ram::" + core.AccountID + ":role/gpucluster-node", "RoleSessionName": "darabonba", "DurationSeconds": 900,
	}, false)
	var role sts.AssumeRoleResponse
	darabonbaAnswer(t, versionSTS+"/AssumeRole", answer, err, &role)
	cr := role.Credentials
	if cr.AccessKeyId == "" || cr.SecurityToken == "" || role.AssumedRoleUser.AssumedRoleId == "" {
		t.Fatalf("AssumeRole: %+v", role)
	}
	answer, err = rpcV3(v.newOpenAPI(cr.AccessKeyId, cr.AccessKeySecret, cr.SecurityToken), versionSTS, "GetCallerIdentity", map[string]any{}, false)
	var assumed sts.GetCallerIdentityResponse
	darabonbaAnswer(t, versionSTS+"/GetCallerIdentity", answer, err, &assumed)
	if assumed.IdentityType != "AssumedRoleUser" || assumed.PrincipalId != role.AssumedRoleUser.AssumedRoleId ||
		assumed.Arn != "acs:ram::"+core.AccountID+":assumed-role/gpucluster-node/darabonba" {
		t.Fatalf("GetCallerIdentity of the assumed role: %+v", assumed)
	}

	_, err = rpcV3(c, versionSTS, "AssumeRole", map[string]any{"RoleArn": "gpucluster-node", "RoleSessionName": "darabonba"}, false)
	wantV3Code(t, err, "InvalidParameter.RoleArn")
}

// TestDarabonbaSLB: a load balancer's life through the darabonba core as slb-20140515's generated
// client sends it (V3, parameters in the query string): create, describe by page
// (PageNumber/PageSize), delete, and InvalidLoadBalancerId.NotFound once it is gone.
func TestDarabonbaSLB(t *testing.T) {
	v := newV3Env(t, Config{})
	f := v.network("10.0.0.0/16", "10.0.1.0/24")
	c := v.newOpenAPI(testAK, testSecret, "")
	var ids []string
	for _, name := range []string{"cp-a", "cp-b", "cp-c"} {
		answer, err := rpcV3(c, versionSLB, "CreateLoadBalancer", map[string]any{
			"RegionId": testRegion, "AddressType": "intranet", "VSwitchId": f.vswID, "LoadBalancerSpec": "slb.s2.small", "LoadBalancerName": name,
		}, false)
		var lb slb.CreateLoadBalancerResponse
		darabonbaAnswer(t, versionSLB+"/CreateLoadBalancer", answer, err, &lb)
		if !strings.HasPrefix(lb.LoadBalancerId, "lb-") || lb.VpcId != f.vpcID || !strings.HasPrefix(lb.Address, "10.0.1.") {
			t.Fatalf("CreateLoadBalancer: %+v", lb)
		}
		ids = append(ids, lb.LoadBalancerId)
	}

	var seen []string
	for page := 1; page <= 3; page++ {
		answer, err := rpcV3(c, versionSLB, "DescribeLoadBalancers", map[string]any{"RegionId": testRegion, "PageNumber": page, "PageSize": 2}, false)
		var d slb.DescribeLoadBalancersResponse
		darabonbaAnswer(t, versionSLB+"/DescribeLoadBalancers", answer, err, &d)
		if d.TotalCount != 3 || d.PageNumber != page || d.PageSize != 2 {
			t.Fatalf("DescribeLoadBalancers page %d: TotalCount %d PageNumber %d PageSize %d", page, d.TotalCount, d.PageNumber, d.PageSize)
		}
		for _, lb := range d.LoadBalancers.LoadBalancer {
			seen = append(seen, lb.LoadBalancerId)
		}
		if page == 3 && len(d.LoadBalancers.LoadBalancer) != 0 {
			t.Fatalf("page past the last: %+v", d.LoadBalancers)
		}
	}
	if strings.Join(slices.Sorted(slices.Values(seen)), ",") != strings.Join(slices.Sorted(slices.Values(ids)), ",") {
		t.Fatalf("pages of 2 listed %v; created %v", seen, ids)
	}

	answer, err := rpcV3(c, versionSLB, "DeleteLoadBalancer", map[string]any{"RegionId": testRegion, "LoadBalancerId": ids[0]}, false)
	darabonbaAnswer(t, versionSLB+"/DeleteLoadBalancer", answer, err, &slb.DeleteLoadBalancerResponse{})
	_, err = rpcV3(c, versionSLB, "DescribeLoadBalancerAttribute", map[string]any{"RegionId": testRegion, "LoadBalancerId": ids[0]}, false)
	wantV3Code(t, err, "InvalidLoadBalancerId.NotFound")
}

// TestDarabonbaESS: a scaling group's life through the darabonba core as ess-20140828's generated
// client sends it (DoRPCRequest: signature version 1.0, the request model as the form body):
// create a group and its configuration, enable it, list groups by page, delete one, and
// InvalidScalingGroupId.NotFound for a group that does not exist.
func TestDarabonbaESS(t *testing.T) {
	v := newV3Env(t, Config{BootTime: time.Millisecond})
	f := v.network("10.0.0.0/16", "10.0.1.0/24")
	c := v.newOpenAPI(testAK, testSecret, "")
	call := func(action string, args map[string]any, into any) {
		t.Helper()
		answer, err := rpcV1(c, versionESS, action, args)
		darabonbaAnswer(t, versionESS+"/"+action, answer, err, into)
	}
	var groups []string
	for _, name := range []string{"pool-a", "pool-b", "pool-c"} {
		var g ess.CreateScalingGroupResponse
		call("CreateScalingGroup", map[string]any{
			"RegionId": testRegion, "ScalingGroupName": name, "MinSize": 0, "MaxSize": 4, "VSwitchIds.1": f.vswID,
		}, &g)
		if !strings.HasPrefix(g.ScalingGroupId, "asg-") {
			t.Fatalf("CreateScalingGroup: %+v", g)
		}
		groups = append(groups, g.ScalingGroupId)
	}
	if r := v.last(); !strings.Contains(r.url, "SignatureVersion=1.0") || !strings.Contains(string(r.body), "ScalingGroupName=pool-c") {
		t.Fatalf("not the older generated client's request (V1 signature, form body): %s body=%q", r.url, r.body)
	}
	var cfg ess.CreateScalingConfigurationResponse
	call("CreateScalingConfiguration", map[string]any{
		"RegionId": testRegion, "ScalingGroupId": groups[0], "ImageId": "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
		"InstanceTypes.1": "ecs.gn7i-c8g1.2xlarge", "SecurityGroupId": f.sgID, "SystemDiskCategory": "cloud_essd", "SystemDiskSize": 40, "Tags": `{"pool":"p1"}`,
	}, &cfg)
	// A configuration's tags are {Key, Value}, not the scaling group's {TagKey, TagValue, Propagate}
	// that the aliyun SDK's shared Tag struct also writes
	// (https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2014-08-28-describescalingconfigurations).
	answer, err := rpcV1(c, versionESS, "DescribeScalingConfigurations", map[string]any{"RegionId": testRegion, "ScalingGroupId": groups[0]})
	var configs ess.DescribeScalingConfigurationsResponse
	darabonbaAnswer(t, versionESS+"/DescribeScalingConfigurations", answer, err, &configs)
	body, _ := answer["body"].(map[string]any)
	tags := fmt.Sprint(body["ScalingConfigurations"].(map[string]any)["ScalingConfiguration"].([]any)[0].(map[string]any)["Tags"])
	if tags != "map[Tag:[map[Key:pool Value:p1]]]" {
		t.Fatalf("a scaling configuration's Tags: %s", tags)
	}
	call("EnableScalingGroup", map[string]any{"RegionId": testRegion, "ScalingGroupId": groups[0], "ActiveScalingConfigurationId": cfg.ScalingConfigurationId},
		&ess.EnableScalingGroupResponse{})

	var seen []string
	for page := 1; page <= 2; page++ {
		var d ess.DescribeScalingGroupsResponse
		call("DescribeScalingGroups", map[string]any{"RegionId": testRegion, "PageNumber": page, "PageSize": 2}, &d)
		if d.TotalCount != 3 || d.PageNumber != page || d.PageSize != 2 {
			t.Fatalf("DescribeScalingGroups page %d: TotalCount %d PageNumber %d PageSize %d", page, d.TotalCount, d.PageNumber, d.PageSize)
		}
		for _, g := range d.ScalingGroups.ScalingGroup {
			seen = append(seen, g.ScalingGroupId)
			if g.ScalingGroupId == groups[0] && (g.LifecycleState != "Active" || g.ActiveScalingConfigurationId != cfg.ScalingConfigurationId) {
				t.Fatalf("the enabled group: %+v", g)
			}
		}
	}
	if strings.Join(slices.Sorted(slices.Values(seen)), ",") != strings.Join(slices.Sorted(slices.Values(groups)), ",") {
		t.Fatalf("pages of 2 listed %v; created %v", seen, groups)
	}

	// A group's tags answer as {TagKey, TagValue, Propagate}
	// (https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2014-08-28-describescalinggroups).
	call("TagResources", map[string]any{"RegionId": testRegion, "ResourceType": "scalinggroup", "ResourceId.1": groups[2],
		"Tag.1.Key": "team", "Tag.1.Value": "ml"}, &ess.TagResourcesResponse{})
	answer, err = rpcV1(c, versionESS, "DescribeScalingGroups", map[string]any{"RegionId": testRegion, "ScalingGroupId.1": groups[2]})
	darabonbaAnswer(t, versionESS+"/DescribeScalingGroups", answer, err, &ess.DescribeScalingGroupsResponse{})
	body, _ = answer["body"].(map[string]any)
	tags = fmt.Sprint(body["ScalingGroups"].(map[string]any)["ScalingGroup"].([]any)[0].(map[string]any)["Tags"])
	if tags != "map[Tag:[map[Propagate:false TagKey:team TagValue:ml]]]" {
		t.Fatalf("a scaling group's Tags: %s", tags)
	}

	call("DeleteScalingGroup", map[string]any{"RegionId": testRegion, "ScalingGroupId": groups[1]}, &ess.DeleteScalingGroupResponse{})
	_, err = rpcV1(c, versionESS, "DeleteScalingGroup", map[string]any{"RegionId": testRegion, "ScalingGroupId": "asg-never-created"})
	wantV3Code(t, err, "InvalidScalingGroupId.NotFound")
}

// TestDarabonbaNASPaging: NAS file systems listed by page through the darabonba core as
// nas-20170626's generated client sends it (PageNumber from 1, PageSize; TotalCount counts every
// match), and InvalidFileSystem.NotFound for a file system that does not exist
// (https://www.alibabacloud.com/help/en/nas/developer-reference/api-nas-2017-06-26-describefilesystems).
func TestDarabonbaNASPaging(t *testing.T) {
	v := newV3Env(t, Config{})
	c := v.newOpenAPI(testAK, testSecret, "")
	var ids []string
	for _, d := range []string{"scratch-a", "scratch-b", "scratch-c"} {
		answer, err := nasCall(c, "CreateFileSystem", map[string]any{
			"RegionId": testRegion, "FileSystemType": "standard", "StorageType": "Performance",
			"ProtocolType": "NFS", "ZoneId": testRegion + "-a", "Description": d,
		}, false)
		var fs nas.CreateFileSystemResponse
		darabonbaAnswer(t, versionNAS+"/CreateFileSystem", answer, err, &fs)
		ids = append(ids, fs.FileSystemId)
	}
	var seen []string
	for page := 1; page <= 2; page++ {
		answer, err := nasCall(c, "DescribeFileSystems", map[string]any{"RegionId": testRegion, "PageNumber": page, "PageSize": 2}, false)
		var d nas.DescribeFileSystemsResponse
		darabonbaAnswer(t, versionNAS+"/DescribeFileSystems", answer, err, &d)
		if d.TotalCount != 3 || d.PageNumber != page || d.PageSize != 2 || len(d.FileSystems.FileSystem) != 2-page+1 {
			t.Fatalf("DescribeFileSystems page %d: TotalCount %d PageNumber %d PageSize %d, %d listed", page, d.TotalCount, d.PageNumber, d.PageSize, len(d.FileSystems.FileSystem))
		}
		for _, fs := range d.FileSystems.FileSystem {
			seen = append(seen, fs.FileSystemId)
		}
	}
	if strings.Join(slices.Sorted(slices.Values(seen)), ",") != strings.Join(slices.Sorted(slices.Values(ids)), ",") {
		t.Fatalf("pages of 2 listed %v; created %v", seen, ids)
	}
	_, err := nasCall(c, "DeleteFileSystem", map[string]any{"RegionId": testRegion, "FileSystemId": "never-created"}, false)
	wantV3Code(t, err, "InvalidFileSystem.NotFound")
}
