package emulator

import (
	"fmt"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

func vpcTag(e *env, typ string, ids []string, kv ...string) error {
	r := vpc.CreateTagResourcesRequest()
	r.RegionId, r.ResourceType, r.ResourceId = testRegion, typ, &ids
	var tags []vpc.TagResourcesTag
	for i := 0; i+1 < len(kv); i += 2 {
		tags = append(tags, vpc.TagResourcesTag{Key: kv[i], Value: kv[i+1]})
	}
	r.Tag = &tags
	_, err := e.vpc.TagResources(r)
	return err
}

func vpcUntag(e *env, typ string, ids []string, all bool, keys ...string) error {
	r := vpc.CreateUnTagResourcesRequest()
	r.RegionId, r.ResourceType, r.ResourceId = testRegion, typ, &ids
	if len(keys) > 0 {
		r.TagKey = &keys
	}
	if all {
		r.All = requests.NewBoolean(true)
	}
	_, err := e.vpc.UnTagResources(r)
	return err
}

func vpcOf(e *env, id string) vpc.Vpc {
	e.t.Helper()
	d := vpc.CreateDescribeVpcsRequest()
	d.RegionId, d.VpcId = testRegion, id
	r, err := e.vpc.DescribeVpcs(d)
	must(e.t, err)
	if len(r.Vpcs.Vpc) != 1 {
		e.t.Fatalf("vpc %s: %d found", id, len(r.Vpcs.Vpc))
	}
	return r.Vpcs.Vpc[0]
}

func vpcTagMap(ts []vpc.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range ts {
		m[t.Key] = t.Value
	}
	return m
}

// natTagMap reads tags as DescribeNatGateways names them (TagKey/TagValue).
func natTagMap(ts []vpc.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range ts {
		m[t.TagKey] = t.TagValue
	}
	return m
}

func TestVPCTagResources(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	cs := vpc.CreateCreateVSwitchRequest()
	cs.RegionId, cs.VpcId, cs.ZoneId, cs.CidrBlock = testRegion, f.vpcID, testRegion+"-b", "10.0.16.0/20"
	sw2, err := e.vpc.CreateVSwitch(cs)
	must(t, err)
	vsws := []string{f.vswID, sw2.VSwitchId}

	must(t, vpcTag(e, "VPC", []string{f.vpcID}, "team", "md", "env", "dev"))
	// ResourceType is case-insensitive on the VPC API.
	must(t, vpcTag(e, "vswitch", vsws, "team", "md"))
	must(t, vpcTag(e, "VSWITCH", vsws[:1], "team", "cfd")) // overwrite one value

	if got := vpcTagMap(vpcOf(e, f.vpcID).Tags.Tag); got["team"] != "md" || got["env"] != "dev" || len(got) != 2 {
		t.Fatalf("VPC tags: %v", got)
	}
	dv := vpc.CreateDescribeVpcsRequest()
	dv.RegionId = testRegion
	dv.Tag = &[]vpc.DescribeVpcsTag{{Key: "env", Value: "dev"}}
	vl, err := e.vpc.DescribeVpcs(dv)
	must(t, err)
	if vl.TotalCount != 1 || vl.Vpcs.Vpc[0].VpcId != f.vpcID {
		t.Fatalf("DescribeVpcs by tag: %+v", vl.Vpcs)
	}
	ds := vpc.CreateDescribeVSwitchesRequest()
	ds.RegionId, ds.VpcId = testRegion, f.vpcID
	ds.Tag = &[]vpc.DescribeVSwitchesTag{{Key: "team", Value: "md"}}
	sl, err := e.vpc.DescribeVSwitches(ds)
	must(t, err)
	if sl.TotalCount != 1 || sl.VSwitches.VSwitch[0].VSwitchId != sw2.VSwitchId || vpcTagMap(sl.VSwitches.VSwitch[0].Tags.Tag)["team"] != "md" {
		t.Fatalf("DescribeVSwitches by tag: %+v", sl.VSwitches)
	}

	// ListTagResources by id and by tag, paged with MaxResults.
	lt := vpc.CreateListTagResourcesRequest()
	lt.RegionId, lt.ResourceType, lt.ResourceId = testRegion, "VPC", &[]string{f.vpcID, "vpc-gone"}
	l, err := e.vpc.ListTagResources(lt)
	must(t, err)
	if len(l.TagResources.TagResource) != 2 || l.TagResources.TagResource[0].ResourceId != f.vpcID ||
		l.TagResources.TagResource[0].ResourceType != "VPC" {
		t.Fatalf("ListTagResources by id: %+v", l.TagResources)
	}
	var rows []vpc.TagResource
	token := ""
	for pages := 0; ; pages++ {
		lt = vpc.CreateListTagResourcesRequest()
		lt.RegionId, lt.ResourceType, lt.NextToken = testRegion, "VSWITCH", token
		lt.Tag = &[]vpc.ListTagResourcesTag{{Key: "team"}}
		lt.MaxResults = requests.NewInteger(1)
		l, err = e.vpc.ListTagResources(lt)
		must(t, err)
		rows = append(rows, l.TagResources.TagResource...)
		if token = l.NextToken; token == "" {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(rows) != 2 || rows[0].ResourceId != vsws[0] || rows[0].TagValue != "cfd" || rows[1].TagValue != "md" {
		t.Fatalf("ListTagResources by tag: %+v", rows)
	}

	// UnTagResources: named keys, then All.
	must(t, vpcUntag(e, "VPC", []string{f.vpcID}, false, "env", "absent"))
	if got := vpcTagMap(vpcOf(e, f.vpcID).Tags.Tag); len(got) != 1 || got["team"] != "md" {
		t.Fatalf("after UnTagResources: %v", got)
	}
	must(t, vpcUntag(e, "VSWITCH", vsws, true))
	sl, err = e.vpc.DescribeVSwitches(ds)
	must(t, err)
	if sl.TotalCount != 0 {
		t.Fatalf("vSwitches still tagged: %+v", sl.VSwitches)
	}

	// Errors.
	err = vpcTag(e, "SECURITYGROUP", []string{f.vpcID}, "k", "v")
	wantCode(t, err, "InvalidResourceType.NotFound")
	if httpStatus(err) != 404 {
		t.Fatalf("unknown type status %d", httpStatus(err))
	}
	wantCode(t, vpcTag(e, "VPC", []string{"vpc-nope"}, "k", "v"), "InvalidResourceId.NotFound")
	wantCode(t, vpcTag(e, "VPC", []string{f.vswID}, "k", "v"), "InvalidResourceId.NotFound") // a vSwitch is not a VPC
	wantCode(t, vpcTag(e, "ROUTETABLE", []string{"vtb-1"}, "k", "v"), "InvalidResourceId.NotFound")
	wantCode(t, vpcTag(e, "VPC", []string{f.vpcID}, "acs:owner", "x"), "InvalidTagKey.Malformed")
	wantCode(t, vpcTag(e, "VPC", []string{f.vpcID}), "MissingParameter")
	var many []string
	for i := 0; i < 20; i++ {
		many = append(many, fmt.Sprintf("k%d", i), "v")
	}
	wantCode(t, vpcTag(e, "VPC", []string{f.vpcID}, many...), "InvalidTagCount") // 1 + 20 > 20
	if got := vpcTagMap(vpcOf(e, f.vpcID).Tags.Tag); len(got) != 1 {
		t.Fatalf("a refused call changed tags: %v", got)
	}
	lt = vpc.CreateListTagResourcesRequest()
	lt.RegionId, lt.ResourceType = testRegion, "VPC"
	all, err := e.vpc.ListTagResources(lt)
	must(t, err) // the model requires ResourceType only: every tagged VPC
	if len(all.TagResources.TagResource) == 0 {
		t.Fatal("ListTagResources without ids or tags listed nothing")
	}
	lt.ResourceId = &[]string{f.vpcID}
	lt.MaxResults = requests.NewInteger(51)
	_, err = e.vpc.ListTagResources(lt)
	wantCode(t, err, "InvalidParameter")
}

func TestECSTagResourceTypes(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	resp, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1))
	must(t, err)
	inst := e.describe(resp.InstanceIdSets.InstanceIdSet)[0]
	eni := inst.NetworkInterfaces.NetworkInterface[0].NetworkInterfaceId

	tag := func(typ, id string) error {
		r := ecs.CreateTagResourcesRequest()
		r.RegionId, r.ResourceType, r.ResourceId = testRegion, typ, &[]string{id}
		r.Tag = &[]ecs.TagResourcesTag{{Key: "owner", Value: "lab"}}
		_, err := e.ecs.TagResources(r)
		return err
	}
	must(t, tag("eni", eni))
	lt := ecs.CreateListTagResourcesRequest()
	lt.RegionId, lt.ResourceType = testRegion, "eni"
	lt.Tag = &[]ecs.ListTagResourcesTag{{Key: "owner", Value: "lab"}}
	l, err := e.ecs.ListTagResources(lt)
	must(t, err)
	if len(l.TagResources.TagResource) != 1 || l.TagResources.TagResource[0].ResourceId != eni || l.TagResources.TagResource[0].ResourceType != "eni" {
		t.Fatalf("eni tags: %+v", l.TagResources)
	}

	// Deployment sets and HPC clusters take no tags on the real API; unknown
	// and wrongly cased types are refused the same way.
	cd := ecs.CreateCreateDeploymentSetRequest()
	cd.RegionId = testRegion
	dsResp, err := e.ecs.CreateDeploymentSet(cd)
	must(t, err)
	for _, typ := range []string{"deploymentset", "hpccluster", "Instance", "vpc"} {
		err := tag(typ, dsResp.DeploymentSetId)
		wantCode(t, err, "InvalidResourceType.NotFound")
		if httpStatus(err) != 404 {
			t.Fatalf("%s: status %d", typ, httpStatus(err))
		}
	}
	// A type the vendor lists but the emulator has no objects of.
	wantCode(t, tag("disk", "d-123"), "InvalidResourceId.NotFound")
	wantCode(t, tag("securitygroup", inst.InstanceId), "InvalidResourceId.NotFound")

	// ListTagResources: TagFilter, ids that do not exist are left out.
	must(t, tag("instance", inst.InstanceId))
	lt = ecs.CreateListTagResourcesRequest()
	lt.RegionId, lt.ResourceType = testRegion, "instance"
	lt.ResourceId = &[]string{inst.InstanceId, "i-gone"}
	lt.TagFilter = &[]ecs.ListTagResourcesTagFilter{{TagKey: "owner", TagValues: &[]string{"x", "lab"}}}
	l, err = e.ecs.ListTagResources(lt)
	must(t, err)
	if len(l.TagResources.TagResource) != 1 || l.TagResources.TagResource[0].ResourceId != inst.InstanceId {
		t.Fatalf("TagFilter: %+v", l.TagResources)
	}

	// An interface's tags go with its instance.
	del := ecs.CreateDeleteInstancesRequest()
	del.RegionId, del.InstanceId, del.Force = testRegion, &[]string{inst.InstanceId}, requests.NewBoolean(true)
	_, err = e.ecs.DeleteInstances(del)
	must(t, err)
	lt = ecs.CreateListTagResourcesRequest()
	lt.RegionId, lt.ResourceType = testRegion, "eni"
	lt.Tag = &[]ecs.ListTagResourcesTag{{Key: "owner"}}
	l, err = e.ecs.ListTagResources(lt)
	must(t, err)
	if len(l.TagResources.TagResource) != 0 {
		t.Fatalf("tags of a deleted interface: %+v", l.TagResources)
	}
	wantCode(t, tag("eni", eni), "InvalidResourceId.NotFound")
}

func TestModifySecurityGroupAttribute(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	m := ecs.CreateModifySecurityGroupAttributeRequest()
	m.RegionId, m.SecurityGroupId = testRegion, f.sgID
	m.SecurityGroupName, m.Description = "renamed", "the cluster group"
	_, err := e.ecs.ModifySecurityGroupAttribute(m)
	must(t, err)
	m = ecs.CreateModifySecurityGroupAttributeRequest()
	m.RegionId, m.SecurityGroupId, m.SecurityGroupName = testRegion, f.sgID, "renamed-again" // description kept
	_, err = e.ecs.ModifySecurityGroupAttribute(m)
	must(t, err)

	a := ecs.CreateDescribeSecurityGroupAttributeRequest()
	a.RegionId, a.SecurityGroupId = testRegion, f.sgID
	ar, err := e.ecs.DescribeSecurityGroupAttribute(a)
	must(t, err)
	if ar.SecurityGroupName != "renamed-again" || ar.Description != "the cluster group" {
		t.Fatalf("attribute: %q %q", ar.SecurityGroupName, ar.Description)
	}
	d := ecs.CreateDescribeSecurityGroupsRequest()
	d.RegionId, d.SecurityGroupName = testRegion, "renamed-again"
	dl, err := e.ecs.DescribeSecurityGroups(d)
	must(t, err)
	if dl.TotalCount != 1 || dl.SecurityGroups.SecurityGroup[0].SecurityGroupId != f.sgID {
		t.Fatalf("by name: %+v", dl.SecurityGroups)
	}

	for _, bad := range []string{"1abc", "x", "http://x"} {
		m = ecs.CreateModifySecurityGroupAttributeRequest()
		m.RegionId, m.SecurityGroupId, m.SecurityGroupName = testRegion, f.sgID, bad
		_, err = e.ecs.ModifySecurityGroupAttribute(m)
		wantCode(t, err, "InvalidSecurityGroupName.Malformed")
	}
	m = ecs.CreateModifySecurityGroupAttributeRequest()
	m.RegionId, m.SecurityGroupId, m.SecurityGroupName = testRegion, "sg-nope", "name"
	_, err = e.ecs.ModifySecurityGroupAttribute(m)
	wantCode(t, err, "InvalidSecurityGroupId.NotFound")
	m = ecs.CreateModifySecurityGroupAttributeRequest()
	m.RegionId, m.SecurityGroupName = testRegion, "name"
	_, err = e.ecs.ModifySecurityGroupAttribute(m)
	wantCode(t, err, "MissingParameter")
}

func TestModifyInstanceAttributeAndAutoRelease(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	resp, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn6i-c4g1.xlarge", 2))
	must(t, err)
	ids := resp.InstanceIdSets.InstanceIdSet
	sg := ecs.CreateCreateSecurityGroupRequest()
	sg.RegionId, sg.VpcId = testRegion, f.vpcID
	g2, err := e.ecs.CreateSecurityGroup(sg)
	must(t, err)

	m := ecs.CreateModifyInstanceAttributeRequest()
	m.RegionId, m.InstanceId = testRegion, ids[0]
	m.InstanceName, m.HostName, m.Description = "gpu-0", "gpu-0", "first node"
	m.SecurityGroupIds = &[]string{g2.SecurityGroupId}
	_, err = e.ecs.ModifyInstanceAttribute(m)
	must(t, err)
	got := e.describe(ids)
	if got[0].InstanceName != "gpu-0" || got[0].HostName != "gpu-0" || got[0].Description != "first node" ||
		len(got[0].SecurityGroupIds.SecurityGroupId) != 1 || got[0].SecurityGroupIds.SecurityGroupId[0] != g2.SecurityGroupId {
		t.Fatalf("after ModifyInstanceAttribute: %+v", got[0])
	}
	if got[1].SecurityGroupIds.SecurityGroupId[0] != f.sgID {
		t.Fatal("the sibling instance's groups changed too")
	}

	// UserData only while Stopped.
	m = ecs.CreateModifyInstanceAttributeRequest()
	m.RegionId, m.InstanceId, m.UserData = testRegion, ids[0], "IyEvYmluL3No"
	_, err = e.ecs.ModifyInstanceAttribute(m)
	wantCode(t, err, "IncorrectInstanceStatus")
	stop := ecs.CreateStopInstancesRequest()
	stop.RegionId, stop.InstanceId = testRegion, &[]string{ids[0]}
	_, err = e.ecs.StopInstances(stop)
	must(t, err)
	_, err = e.ecs.ModifyInstanceAttribute(m)
	must(t, err)

	bad := ecs.CreateModifyInstanceAttributeRequest()
	bad.RegionId, bad.InstanceId, bad.SecurityGroupIds = testRegion, ids[1], &[]string{"sg-nope"}
	_, err = e.ecs.ModifyInstanceAttribute(bad)
	wantCode(t, err, "InvalidSecurityGroupId.NotFound")
	bad = ecs.CreateModifyInstanceAttributeRequest()
	bad.RegionId, bad.InstanceId, bad.InstanceName = testRegion, "i-nope", "x1"
	_, err = e.ecs.ModifyInstanceAttribute(bad)
	wantCode(t, err, "InvalidInstanceId.NotFound")

	// Set, then cancel, a release time.
	at := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Second)
	ar := ecs.CreateModifyInstanceAutoReleaseTimeRequest()
	ar.RegionId, ar.InstanceId, ar.AutoReleaseTime = testRegion, ids[1], at.Format("2006-01-02T15:04:05Z")
	_, err = e.ecs.ModifyInstanceAutoReleaseTime(ar)
	must(t, err)
	if got := e.describe(ids[1:])[0].AutoReleaseTime; got != at.Format("2006-01-02T15:04:05Z") {
		t.Fatalf("AutoReleaseTime %q", got)
	}
	ar = ecs.CreateModifyInstanceAutoReleaseTimeRequest()
	ar.RegionId, ar.InstanceId = testRegion, ids[1]
	_, err = e.ecs.ModifyInstanceAutoReleaseTime(ar)
	must(t, err)
	if got := e.describe(ids[1:])[0].AutoReleaseTime; got != "" {
		t.Fatalf("AutoReleaseTime not cancelled: %q", got)
	}
	ar.AutoReleaseTime = "2001-01-01T00:00:00Z"
	_, err = e.ecs.ModifyInstanceAutoReleaseTime(ar)
	wantCode(t, err, "InvalidParameter")

	// The first group now has one member fewer: once the second instance
	// moves too, it can be deleted.
	m = ecs.CreateModifyInstanceAttributeRequest()
	m.RegionId, m.InstanceId, m.SecurityGroupIds = testRegion, ids[1], &[]string{g2.SecurityGroupId}
	_, err = e.ecs.ModifyInstanceAttribute(m)
	must(t, err)
	dsg := ecs.CreateDeleteSecurityGroupRequest()
	dsg.RegionId, dsg.SecurityGroupId = testRegion, f.sgID
	_, err = e.ecs.DeleteSecurityGroup(dsg)
	must(t, err)
	dsg.SecurityGroupId = g2.SecurityGroupId
	_, err = e.ecs.DeleteSecurityGroup(dsg)
	wantCode(t, err, "DependencyViolation")
}

func TestDescribeUserData(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	req := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1)
	req.UserData = "I2Nsb3VkLWNvbmZpZwo=" // "#cloud-config\n"
	resp, err := e.ecs.RunInstances(req)
	must(t, err)
	d := ecs.CreateDescribeUserDataRequest()
	d.RegionId, d.InstanceId = testRegion, resp.InstanceIdSets.InstanceIdSet[0]
	got, err := e.ecs.DescribeUserData(d)
	must(t, err)
	if got.UserData != req.UserData || got.InstanceId != d.InstanceId {
		t.Fatalf("DescribeUserData = %+v, want the user data given to RunInstances", got)
	}
	d.InstanceId = "i-missing"
	_, err = e.ecs.DescribeUserData(d)
	wantCode(t, err, "InvalidInstanceId.NotFound")
}
