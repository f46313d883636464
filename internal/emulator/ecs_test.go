package emulator

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

func TestInstanceLifecycle(t *testing.T) {
	// Boot time long enough that each phase (half of it) outlasts a describe on a loaded machine;
	// the test watches the transitions happen rather than sleeping a guessed time.
	e := newEnv(t, Config{BootTime: 3 * time.Second})
	f := e.network("10.0.0.0/8", "10.1.0.0/16")
	r := e.runReq(f, "ecs.gn7e-c16g1.32xlarge", 3)
	r.InstanceName = "node"
	r.Tag = &[]ecs.RunInstancesTag{{Key: "cluster", Value: "c1"}, {Key: "role", Value: "worker"}}
	r.DataDisk = &[]ecs.RunInstancesDataDisk{{Category: "cloud_essd", PerformanceLevel: "PL2", Size: "500"}}
	r.UserData = "IyEvYmluL3NoCmVjaG8gaGk="
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	ids := resp.InstanceIdSets.InstanceIdSet
	if len(ids) != 3 {
		t.Fatalf("want 3 ids, got %v", ids)
	}
	got := e.describe(ids)
	if len(got) != 3 || got[0].Status != "Pending" || got[0].GPUAmount != 8 || got[0].VpcAttributes.VSwitchId != f.vswID {
		t.Fatalf("unexpected describe: %+v", got[0])
	}
	// DescribeInstances names tags TagKey/TagValue (the vendor's model has no Key/Value there).
	if got[0].Tags.Tag[0].TagKey != "cluster" || got[0].InstanceName != "node" || got[0].VpcAttributes.PrivateIpAddress.IpAddress[0] == "" {
		t.Fatalf("tags/name/ip not returned: %+v", got[0])
	}
	if st := e.nextStatus(ids[0], "Pending"); st != "Starting" {
		t.Fatalf("after Pending want Starting, got %s", st)
	}
	if st := e.nextStatus(ids[0], "Starting"); st != "Running" {
		t.Fatalf("after Starting want Running, got %s", st)
	}
	// Delete without Force while running is refused.
	del := ecs.CreateDeleteInstancesRequest()
	del.RegionId = testRegion
	del.InstanceId = &ids
	_, err = e.ecs.DeleteInstances(del)
	wantCode(t, err, "IncorrectInstanceStatus")
	if httpStatus(err) != 403 {
		t.Fatalf("IncorrectInstanceStatus status %d", httpStatus(err))
	}
	stop := ecs.CreateStopInstancesRequest()
	stop.RegionId = testRegion
	stop.InstanceId = &[]string{ids[0]}
	sr, err := e.ecs.StopInstances(stop)
	must(t, err)
	if sr.InstanceResponses.InstanceResponse[0].CurrentStatus != "Stopping" {
		t.Fatalf("stop: %+v", sr)
	}
	if st := e.nextStatus(ids[0], "Stopping"); st != "Stopped" {
		t.Fatalf("after Stopping want Stopped, got %s", st)
	}
	start := ecs.CreateStartInstancesRequest()
	start.RegionId = testRegion
	start.InstanceId = &[]string{ids[0]}
	_, err = e.ecs.StartInstances(start)
	must(t, err)
	_, err = e.ecs.StartInstances(start)
	wantCode(t, err, "IncorrectInstanceStatus")

	del.Force = requests.NewBoolean(true)
	_, err = e.ecs.DeleteInstances(del) // the vendor's answer is a RequestId only
	must(t, err)
	if n := len(e.describe(ids)); n != 0 {
		t.Fatalf("%d instances left after delete", n)
	}
	_, err = e.ecs.DeleteInstances(del)
	wantCode(t, err, "InvalidInstanceId.NotFound")
	if httpStatus(err) != 404 {
		t.Fatalf("status %d", httpStatus(err))
	}
}

func TestDescribeInstancesFiltersAndPaging(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("192.168.0.0/16", "192.168.0.0/20")
	f2 := f
	cs := vpc.CreateCreateVSwitchRequest()
	cs.RegionId, cs.VpcId, cs.ZoneId, cs.CidrBlock = testRegion, f.vpcID, testRegion+"-b", "192.168.16.0/20"
	sw, err := e.vpc.CreateVSwitch(cs)
	must(t, err)
	f2.vswID = sw.VSwitchId
	var all []string
	for i := 0; i < 3; i++ {
		r := e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 50)
		r.Tag = &[]ecs.RunInstancesTag{{Key: "batch", Value: fmt.Sprint(i)}}
		resp, err := e.ecs.RunInstances(r)
		must(t, err)
		all = append(all, resp.InstanceIdSets.InstanceIdSet...)
	}
	r := e.runReq(f2, "ecs.gn7i-c8g1.2xlarge", 7)
	_, err = e.ecs.RunInstances(r)
	must(t, err)

	// NextToken paging over everything with MaxResults 40.
	seen := map[string]bool{}
	for _, p := range e.walkInstancePages(func(d *ecs.DescribeInstancesRequest) { d.MaxResults = requests.NewInteger(40) }) {
		for _, in := range p.Instances.Instance {
			seen[in.InstanceId] = true
		}
	}
	if len(seen) != 157 {
		t.Fatalf("paged %d instances, want 157", len(seen))
	}
	// Tag filter.
	d := ecs.CreateDescribeInstancesRequest()
	d.RegionId = testRegion
	d.Tag = &[]ecs.DescribeInstancesTag{{Key: "batch", Value: "1"}}
	d.MaxResults = requests.NewInteger(100)
	resp, err := e.ecs.DescribeInstances(d)
	must(t, err)
	if len(resp.Instances.Instance) != 50 || resp.TotalCount != 50 {
		t.Fatalf("tag filter: %d/%d", len(resp.Instances.Instance), resp.TotalCount)
	}
	// VSwitch filter.
	d = ecs.CreateDescribeInstancesRequest()
	d.RegionId = testRegion
	d.VSwitchId = f2.vswID
	d.MaxResults = requests.NewInteger(100)
	resp, err = e.ecs.DescribeInstances(d)
	must(t, err)
	if len(resp.Instances.Instance) != 7 {
		t.Fatalf("vswitch filter: %d", len(resp.Instances.Instance))
	}
	// Status filter and too many ids.
	d = ecs.CreateDescribeInstancesRequest()
	d.RegionId = testRegion
	d.Status = "Stopped"
	resp, err = e.ecs.DescribeInstances(d)
	must(t, err)
	if len(resp.Instances.Instance) != 0 {
		t.Fatal("status filter")
	}
	d.Status = ""
	d.InstanceIds = jsonIDs(all[:101])
	_, err = e.ecs.DescribeInstances(d)
	wantCode(t, err, "InvalidParameter")
	// MaxResults out of range is clamped, not refused: TestDescribeInstancesEmptyIdsAndClampedMaxResults.
}

func TestRunInstancesIdempotency(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 2)
	r.ClientToken = "tok-1"
	a, err := e.ecs.RunInstances(r)
	must(t, err)
	r2 := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 2)
	r2.ClientToken = "tok-1"
	b, err := e.ecs.RunInstances(r2)
	must(t, err)
	if strings.Join(a.InstanceIdSets.InstanceIdSet, ",") != strings.Join(b.InstanceIdSets.InstanceIdSet, ",") {
		t.Fatalf("retry made new instances: %v vs %v", a.InstanceIdSets, b.InstanceIdSets)
	}
	if n := len(e.s.Resources().Instances); n != 2 {
		t.Fatalf("%d instances, want 2", n)
	}
	r3 := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 3)
	r3.ClientToken = "tok-1"
	_, err = e.ecs.RunInstances(r3)
	wantCode(t, err, "IdempotentParameterMismatch")
}

// UniqueSuffix numbers the names of one call's instances 001, 002, ... (the vendor's batch
// naming); a second call starts again at 001, and without HostName every host name is ECS's
// default iZ<id>Z, unique.
func TestRunInstancesUniqueSuffix(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	var names, hosts []string
	for _, host := range []string{"gpu", "gpu", ""} {
		r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 2)
		r.InstanceName, r.HostName, r.UniqueSuffix = "gpu", host, requests.NewBoolean(true)
		resp, err := e.ecs.RunInstances(r)
		must(t, err)
		for _, in := range e.describe(resp.InstanceIdSets.InstanceIdSet) {
			names, hosts = append(names, in.InstanceName), append(hosts, in.HostName)
		}
	}
	if want := "gpu001,gpu002,gpu001,gpu002,gpu001,gpu002"; strings.Join(names, ",") != want {
		t.Errorf("instance names %v, want %s", names, want)
	}
	if hosts[0] != "gpu001" || hosts[2] != "gpu001" || !strings.HasPrefix(hosts[4], "iZ") || hosts[4] == hosts[5] {
		t.Errorf("host names %v: want gpu001/gpu002 per call with HostName, unique iZ...Z without", hosts)
	}
}

func TestRunInstancesValidation(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	cases := []struct {
		name string
		mod  func(r *ecs.RunInstancesRequest)
		code string
	}{
		{"unknown image", func(r *ecs.RunInstancesRequest) { r.ImageId = "nope.vhd" }, "InvalidImageId.NotFound"},
		{"unknown type", func(r *ecs.RunInstancesRequest) { r.InstanceType = "ecs.gn99.xlarge" }, "InvalidInstanceType.ValueNotSupported"},
		{"amount", func(r *ecs.RunInstancesRequest) { r.Amount = requests.NewInteger(101) }, "InvalidParameter"},
		{"min amount", func(r *ecs.RunInstancesRequest) { r.MinAmount = requests.NewInteger(5) }, "InvalidParameter"},
		{"sccgn needs hpc", func(r *ecs.RunInstancesRequest) { r.InstanceType = "ecs.sccgn7ex.32xlarge" }, "MissingParameter"},
		{"eRDMA on a type without ERI", func(r *ecs.RunInstancesRequest) {
			r.NetworkInterface = &[]ecs.RunInstancesNetworkInterface{{NetworkInterfaceTrafficMode: "HighPerformance", NetworkCardIndex: "0"}}
		}, "InvalidParameter.NetworkInterfaceTrafficMode"},
		{"PL2 too small", func(r *ecs.RunInstancesRequest) {
			r.DataDisk = &[]ecs.RunInstancesDataDisk{{Category: "cloud_essd", PerformanceLevel: "PL2", Size: "400"}}
		}, "InvalidDataDiskSize.ValueNotSupported"},
		{"PL3 system disk too small", func(r *ecs.RunInstancesRequest) { r.SystemDiskPerformanceLevel = "PL3" }, "InvalidSystemDiskSize.ValueNotSupported"},
		{"ephemeral on gn6i", func(r *ecs.RunInstancesRequest) {
			r.DataDisk = &[]ecs.RunInstancesDataDisk{{Category: "elastic_ephemeral_disk_standard", Size: "100"}}
		}, "InvalidDataDiskCategory.ValueNotSupported"},
		{"autopl iops", func(r *ecs.RunInstancesRequest) {
			r.DataDisk = &[]ecs.RunInstancesDataDisk{{Category: "cloud_auto", Size: "10", ProvisionedIops: "9000"}}
		}, "InvalidProvisionedIops.ValueNotSupported"},
		{"bad user data", func(r *ecs.RunInstancesRequest) { r.UserData = "%%%" }, "InvalidUserData.Base64FormatInvalid"},
		{"past auto release", func(r *ecs.RunInstancesRequest) { r.AutoReleaseTime = "2001-01-01T00:00:00Z" }, "InvalidParameter"},
		{"unknown vswitch", func(r *ecs.RunInstancesRequest) { r.VSwitchId = "vsw-nope" }, "InvalidVSwitchId.NotFound"},
		{"dry run", func(r *ecs.RunInstancesRequest) { r.DryRun = requests.NewBoolean(true) }, "DryRunOperation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1)
			c.mod(r)
			_, err := e.ecs.RunInstances(r)
			wantCode(t, err, c.code)
		})
	}
	// eRDMA where the type has an ERI; elastic ephemeral disks on gn8is; SCC with an HPC cluster.
	r := e.runReq(f, "ecs.gn8is.4xlarge", 1)
	r.NetworkInterface = &[]ecs.RunInstancesNetworkInterface{{NetworkInterfaceTrafficMode: "HighPerformance", NetworkCardIndex: "0", VSwitchId: f.vswID}}
	r.DataDisk = &[]ecs.RunInstancesDataDisk{{Category: "elastic_ephemeral_disk_premium", Size: "1024"}, {Category: "cloud_auto", Size: "100", ProvisionedIops: "1000"}}
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	// DescribeInstances does not show the traffic mode (the vendor's model has no such field
	// there): look at what the emulator stored.
	e.s.mu.RLock()
	mode := e.s.db.compute().Instances[resp.InstanceIdSets.InstanceIdSet[0]].NICs[0].Mode
	e.s.mu.RUnlock()
	if mode != "HighPerformance" {
		t.Fatalf("traffic mode not kept: %q", mode)
	}
	h := ecs.CreateCreateHpcClusterRequest()
	h.RegionId, h.Name = testRegion, "md-cluster"
	hr, err := e.ecs.CreateHpcCluster(h)
	must(t, err)
	r = e.runReq(f, "ecs.sccgn7ex.32xlarge", 1)
	r.HpcClusterId = hr.HpcClusterId
	_, err = e.ecs.RunInstances(r)
	must(t, err)
	dh := ecs.CreateDeleteHpcClusterRequest()
	dh.RegionId, dh.HpcClusterId = testRegion, hr.HpcClusterId
	_, err = e.ecs.DeleteHpcCluster(dh)
	wantCode(t, err, "DependencyViolation")
	h.Name = "1bad"
	_, err = e.ecs.CreateHpcCluster(h)
	wantCode(t, err, "InvalidName.Malformed")
	dsc := ecs.CreateDescribeHpcClustersRequest()
	dsc.RegionId = testRegion
	hl, err := e.ecs.DescribeHpcClusters(dsc)
	must(t, err)
	if len(hl.HpcClusters.HpcCluster) != 1 || hl.HpcClusters.HpcCluster[0].Name != "md-cluster" {
		t.Fatalf("hpc clusters: %+v", hl.HpcClusters)
	}
}

func TestStockAndQuota(t *testing.T) {
	e := newEnv(t, Config{GPUQuota: 20})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	e.s.SetCapacity(map[string]map[string]int{f.zone: {"ecs.gn7i-c8g1.2xlarge": 3}})
	r := e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 5)
	_, err := e.ecs.RunInstances(r)
	wantCode(t, err, "OperationDenied.NoStock")
	// MinAmount allows a partial success.
	r = e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 5)
	r.MinAmount = requests.NewInteger(2)
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	if n := len(resp.InstanceIdSets.InstanceIdSet); n != 3 {
		t.Fatalf("partial success made %d, want 3", n)
	}
	// DescribeAvailableResource reports the sold-out type.
	ar := ecs.CreateDescribeAvailableResourceRequest()
	ar.RegionId, ar.DestinationResource, ar.InstanceType, ar.ZoneId = testRegion, "InstanceType", "ecs.gn7i-c8g1.2xlarge", f.zone
	av, err := e.ecs.DescribeAvailableResource(ar)
	must(t, err)
	sr := av.AvailableZones.AvailableZone[0].AvailableResources.AvailableResource[0].SupportedResources.SupportedResource[0]
	if sr.Status != "SoldOut" || sr.StatusCategory != "WithoutStock" {
		t.Fatalf("want SoldOut, got %+v", sr)
	}
	// Quota: 3 GPUs used of 20; two 8-GPU instances would make 19, three 27.
	r = e.runReq(f, "ecs.gn7e-c16g1.32xlarge", 3)
	_, err = e.ecs.RunInstances(r)
	wantCode(t, err, "QuotaExceed.ElasticQuota")
	if !strings.Contains(err.Error(), "24 GPUs") || !strings.Contains(err.Error(), "quota of 20") {
		t.Fatalf("quota message lacks numbers: %v", err)
	}
	r.MinAmount = requests.NewInteger(1)
	resp, err = e.ecs.RunInstances(r)
	must(t, err)
	if n := len(resp.InstanceIdSets.InstanceIdSet); n != 2 {
		t.Fatalf("quota-limited partial: %d, want 2", n)
	}
}

func TestDeploymentSets(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	c := ecs.CreateCreateDeploymentSetRequest()
	c.RegionId, c.Strategy, c.DeploymentSetName = testRegion, "LowLatency", "ll"
	ds, err := e.ecs.CreateDeploymentSet(c)
	must(t, err)
	r := e.runReq(f, "ecs.gn8v-8x.48xlarge", 21)
	r.DeploymentSetId = ds.DeploymentSetId
	_, err = e.ecs.RunInstances(r)
	wantCode(t, err, "DeploymentSet.InstanceAmountExceeded")
	r = e.runReq(f, "ecs.gn8v-8x.48xlarge", 20)
	r.DeploymentSetId = ds.DeploymentSetId
	_, err = e.ecs.RunInstances(r)
	must(t, err)
	r = e.runReq(f, "ecs.gn8v-8x.48xlarge", 1)
	r.DeploymentSetId = ds.DeploymentSetId
	_, err = e.ecs.RunInstances(r)
	wantCode(t, err, "DeploymentSet.InstanceAmountExceeded")
	c2 := ecs.CreateCreateDeploymentSetRequest()
	c2.RegionId = testRegion
	ds2, err := e.ecs.CreateDeploymentSet(c2)
	must(t, err)
	r = e.runReq(f, "ecs.gn8v-8x.48xlarge", 1)
	r.DeploymentSetId = ds2.DeploymentSetId
	r.SpotStrategy = "SpotAsPriceGo"
	_, err = e.ecs.RunInstances(r)
	wantCode(t, err, "InvalidParameter.Conflict")
	d := ecs.CreateDescribeDeploymentSetsRequest()
	d.RegionId = testRegion
	d.DeploymentSetIds = jsonIDs([]string{ds.DeploymentSetId})
	dl, err := e.ecs.DescribeDeploymentSets(d)
	must(t, err)
	if got := dl.DeploymentSets.DeploymentSet[0]; got.Strategy != "LowLatency" || got.InstanceAmount != 20 || len(got.InstanceIds.InstanceId) != 20 {
		t.Fatalf("describe deployment set: %+v", got)
	}
	del := ecs.CreateDeleteDeploymentSetRequest()
	del.RegionId, del.DeploymentSetId = testRegion, ds.DeploymentSetId
	_, err = e.ecs.DeleteDeploymentSet(del)
	wantCode(t, err, "DependencyViolation")
	del.DeploymentSetId = ds2.DeploymentSetId
	_, err = e.ecs.DeleteDeploymentSet(del)
	must(t, err)
}

func TestSecurityGroupRules(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	a := ecs.CreateAuthorizeSecurityGroupRequest()
	a.RegionId, a.SecurityGroupId = testRegion, f.sgID
	a.Permissions = &[]ecs.AuthorizeSecurityGroupPermissions{
		{IpProtocol: "TCP", PortRange: "22/22", SourceCidrIp: "10.0.0.0/8", Policy: "accept", Priority: "1"},
		{IpProtocol: "ALL", PortRange: "-1/-1", SourceGroupId: f.sgID},
	}
	_, err := e.ecs.AuthorizeSecurityGroup(a)
	must(t, err)
	_, err = e.ecs.AuthorizeSecurityGroup(a) // identical rules: no-op
	must(t, err)
	eg := ecs.CreateAuthorizeSecurityGroupEgressRequest()
	eg.RegionId, eg.SecurityGroupId = testRegion, f.sgID
	eg.Permissions = &[]ecs.AuthorizeSecurityGroupEgressPermissions{{IpProtocol: "UDP", PortRange: "53/53", DestCidrIp: "0.0.0.0/0"}}
	_, err = e.ecs.AuthorizeSecurityGroupEgress(eg)
	must(t, err)
	bad := ecs.CreateAuthorizeSecurityGroupRequest()
	bad.RegionId, bad.SecurityGroupId = testRegion, f.sgID
	bad.Permissions = &[]ecs.AuthorizeSecurityGroupPermissions{{IpProtocol: "TCP", PortRange: "0/70000", SourceCidrIp: "0.0.0.0/0"}}
	_, err = e.ecs.AuthorizeSecurityGroup(bad)
	wantCode(t, err, "InvalidPortRange.Malformed")
	bad.Permissions = &[]ecs.AuthorizeSecurityGroupPermissions{{IpProtocol: "TCP", PortRange: "1/2", SourceCidrIp: "0.0.0.0/0", Priority: "101"}}
	_, err = e.ecs.AuthorizeSecurityGroup(bad)
	wantCode(t, err, "InvalidPriority.Malformed")

	da := ecs.CreateDescribeSecurityGroupAttributeRequest()
	da.RegionId, da.SecurityGroupId = testRegion, f.sgID
	attr, err := e.ecs.DescribeSecurityGroupAttribute(da)
	must(t, err)
	if n := len(attr.Permissions.Permission); n != 3 {
		t.Fatalf("want 3 rules, got %d: %+v", n, attr.Permissions)
	}
	rv := ecs.CreateRevokeSecurityGroupRequest()
	rv.RegionId, rv.SecurityGroupId = testRegion, f.sgID
	rv.Permissions = &[]ecs.RevokeSecurityGroupPermissions{{IpProtocol: "TCP", PortRange: "22/22", SourceCidrIp: "10.0.0.0/8", Policy: "accept", Priority: "1"}}
	_, err = e.ecs.RevokeSecurityGroup(rv)
	must(t, err)
	re := ecs.CreateRevokeSecurityGroupEgressRequest()
	re.RegionId, re.SecurityGroupId = testRegion, f.sgID
	re.Permissions = &[]ecs.RevokeSecurityGroupEgressPermissions{{IpProtocol: "UDP", PortRange: "53/53", DestCidrIp: "0.0.0.0/0"}}
	_, err = e.ecs.RevokeSecurityGroupEgress(re)
	must(t, err)
	attr, err = e.ecs.DescribeSecurityGroupAttribute(da)
	must(t, err)
	if n := len(attr.Permissions.Permission); n != 1 {
		t.Fatalf("want 1 rule left, got %d", n)
	}
	ds := ecs.CreateDescribeSecurityGroupsRequest()
	ds.RegionId, ds.VpcId = testRegion, f.vpcID
	list, err := e.ecs.DescribeSecurityGroups(ds)
	must(t, err)
	if len(list.SecurityGroups.SecurityGroup) != 1 || list.SecurityGroups.SecurityGroup[0].SecurityGroupId != f.sgID {
		t.Fatalf("describe groups: %+v", list.SecurityGroups)
	}
	// In use by an instance: DependencyViolation.
	resp, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1))
	must(t, err)
	dg := ecs.CreateDeleteSecurityGroupRequest()
	dg.RegionId, dg.SecurityGroupId = testRegion, f.sgID
	_, err = e.ecs.DeleteSecurityGroup(dg)
	wantCode(t, err, "DependencyViolation")
	del := ecs.CreateDeleteInstancesRequest()
	del.RegionId, del.InstanceId, del.Force = testRegion, &resp.InstanceIdSets.InstanceIdSet, requests.NewBoolean(true)
	_, err = e.ecs.DeleteInstances(del)
	must(t, err)
	_, err = e.ecs.DeleteSecurityGroup(dg)
	must(t, err)
}

func TestTags(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	resp, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn6i-c4g1.xlarge", 2))
	must(t, err)
	ids := resp.InstanceIdSets.InstanceIdSet
	tr := ecs.CreateTagResourcesRequest()
	tr.RegionId, tr.ResourceType, tr.ResourceId = testRegion, "instance", &ids
	tr.Tag = &[]ecs.TagResourcesTag{{Key: "owner", Value: "lab"}}
	_, err = e.ecs.TagResources(tr)
	must(t, err)
	d := ecs.CreateDescribeInstancesRequest()
	d.RegionId = testRegion
	d.Tag = &[]ecs.DescribeInstancesTag{{Key: "owner", Value: "lab"}}
	got, err := e.ecs.DescribeInstances(d)
	must(t, err)
	if len(got.Instances.Instance) != 2 {
		t.Fatalf("tagged instances: %d", len(got.Instances.Instance))
	}
	lt := ecs.CreateListTagResourcesRequest()
	lt.RegionId, lt.ResourceType = testRegion, "instance"
	lt.Tag = &[]ecs.ListTagResourcesTag{{Key: "owner", Value: "lab"}}
	l, err := e.ecs.ListTagResources(lt)
	must(t, err)
	if len(l.TagResources.TagResource) != 2 || l.TagResources.TagResource[0].TagValue != "lab" {
		t.Fatalf("list tags: %+v", l.TagResources)
	}
	ut := ecs.CreateUntagResourcesRequest()
	ut.RegionId, ut.ResourceType, ut.ResourceId, ut.TagKey = testRegion, "instance", &[]string{ids[0]}, &[]string{"owner"}
	_, err = e.ecs.UntagResources(ut)
	must(t, err)
	got, err = e.ecs.DescribeInstances(d)
	must(t, err)
	if len(got.Instances.Instance) != 1 {
		t.Fatalf("after untag: %d", len(got.Instances.Instance))
	}
	// SDK request objects keep their old parameters: build a fresh one.
	tr = ecs.CreateTagResourcesRequest()
	tr.RegionId, tr.ResourceType, tr.ResourceId = testRegion, "securitygroup", &[]string{f.sgID}
	tr.Tag = &[]ecs.TagResourcesTag{{Key: "owner", Value: "lab"}}
	_, err = e.ecs.TagResources(tr)
	must(t, err)
	ds := ecs.CreateDescribeSecurityGroupsRequest()
	ds.RegionId = testRegion
	ds.Tag = &[]ecs.DescribeSecurityGroupsTag{{Key: "owner", Value: "lab"}}
	sl, err := e.ecs.DescribeSecurityGroups(ds)
	must(t, err)
	if len(sl.SecurityGroups.SecurityGroup) != 1 {
		t.Fatal("sg tag filter")
	}
}

func TestCatalog(t *testing.T) {
	e := newEnv(t, Config{})
	dt := ecs.CreateDescribeInstanceTypesRequest()
	dt.RegionId = testRegion
	types, err := e.ecs.DescribeInstanceTypes(dt)
	must(t, err)
	fams := map[string]bool{}
	for _, it := range types.InstanceTypes.InstanceType {
		fams[it.InstanceTypeFamily] = true
		if it.InstanceTypeId == "ecs.ebmgn7ex.32xlarge" && (it.EriQuantity != 2 || it.GPUAmount != 8 || it.GPUMemorySize != 80) {
			t.Fatalf("ebmgn7ex: %+v", it)
		}
		if it.InstanceTypeId == "ecs.gn7i-c8g1.2xlarge" && (it.GPUSpec != "NVIDIA A10" || it.EriQuantity != 0 || it.MemorySize != 30) {
			t.Fatalf("gn7i: %+v", it)
		}
	}
	for _, f := range []string{"gn6i", "gn6v", "gn6e", "gn7", "gn7e", "gn7i", "gn7s", "gn8is", "gn8v", "ebmgn7e", "ebmgn7ex", "ebmgn8v", "sccgn7ex"} {
		if !fams["ecs."+f] {
			t.Errorf("family %s missing", f)
		}
	}
	dr := ecs.CreateDescribeRegionsRequest()
	regions, err := e.ecs.DescribeRegions(dr)
	must(t, err)
	if len(regions.Regions.Region) < 4 || regions.Regions.Region[0].RegionId != "cn-wulanchabu" {
		t.Fatalf("regions: %+v", regions.Regions)
	}
	dz := ecs.CreateDescribeZonesRequest()
	dz.RegionId = testRegion
	zones, err := e.ecs.DescribeZones(dz)
	must(t, err)
	if len(zones.Zones.Zone) < 3 {
		t.Fatalf("zones: %+v", zones.Zones)
	}
	di := ecs.CreateDescribeImagesRequest()
	di.RegionId = testRegion
	imgs, err := e.ecs.DescribeImages(di)
	must(t, err)
	if len(imgs.Images.Image) != 2 {
		t.Fatalf("images: %+v", imgs.Images)
	}
	di.ImageId = "aliyun_3_x64_20G_alibase_20240101.vhd"
	imgs, err = e.ecs.DescribeImages(di)
	must(t, err)
	if len(imgs.Images.Image) != 1 || imgs.Images.Image[0].Status != "Available" {
		t.Fatal("image by id")
	}
	di.ImageId = "centos_6.vhd"
	_, err = e.ecs.DescribeImages(di)
	wantCode(t, err, "InvalidImageId.NotFound")
	dp := ecs.CreateDescribePriceRequest()
	dp.RegionId, dp.InstanceType = testRegion, "ecs.gn8v-8x.48xlarge"
	p1, err := e.ecs.DescribePrice(dp)
	must(t, err)
	dp.InstanceType = "ecs.gn6i-c4g1.xlarge"
	p2, err := e.ecs.DescribePrice(dp)
	must(t, err)
	if p1.PriceInfo.Price.TradePrice <= p2.PriceInfo.Price.TradePrice || p2.PriceInfo.Price.Currency != "CNY" {
		t.Fatalf("prices: %+v %+v", p1.PriceInfo.Price, p2.PriceInfo.Price)
	}
	ar := ecs.CreateDescribeAvailableResourceRequest()
	ar.RegionId, ar.DestinationResource = testRegion, "InstanceType"
	av, err := e.ecs.DescribeAvailableResource(ar)
	must(t, err)
	if len(av.AvailableZones.AvailableZone) != 3 || av.AvailableZones.AvailableZone[0].StatusCategory != "WithStock" {
		t.Fatalf("available: %+v", av.AvailableZones)
	}
}

func TestAutoReleaseAndConsistencyDelay(t *testing.T) {
	// Delays long enough to observe on a loaded machine; the test polls instead of sleeping.
	e := newEnv(t, Config{ConsistencyDelay: 1500 * time.Millisecond})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1)
	r.AutoReleaseTime = time.Now().UTC().Add(5 * time.Second).Format("2006-01-02T15:04:05Z")
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	ids := resp.InstanceIdSets.InstanceIdSet
	if n := len(e.describe(ids)); n != 0 {
		t.Fatal("new instance visible during the consistency delay")
	}
	var got []ecs.Instance
	for deadline := time.Now().Add(4 * time.Second); len(got) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("instance still hidden long after the consistency delay")
		}
		got = e.describe(ids)
	}
	if got[0].AutoReleaseTime == "" {
		t.Fatalf("after delay: %+v", got)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(e.s.Resources().Instances) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("AutoReleaseTime not honoured")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestConcurrentClients(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		// The SDK client is not safe for concurrent use (it writes its own
		// timeout fields per call), so each goroutine has its own.
		ec, _, _, _ := e.clients(credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 2)
				r.Tag = &[]ecs.RunInstancesTag{{Key: "g", Value: fmt.Sprint(g)}}
				resp, err := ec.RunInstances(r)
				if err != nil {
					errs <- err
					return
				}
				d := ecs.CreateDescribeInstancesRequest()
				d.RegionId = testRegion
				d.InstanceIds = jsonIDs(resp.InstanceIdSets.InstanceIdSet)
				if _, err := ec.DescribeInstances(d); err != nil {
					errs <- err
					return
				}
				_ = e.s.Stats()
				_ = e.s.Resources()
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(e.s.Resources().Instances); n != 80 {
		t.Fatalf("%d instances, want 80", n)
	}
}
