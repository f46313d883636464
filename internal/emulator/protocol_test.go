package emulator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

func regionsReq() *ecs.DescribeRegionsRequest { return ecs.CreateDescribeRegionsRequest() }

func TestSignatureChecks(t *testing.T) {
	e := newEnv(t, Config{})
	// Unknown key.
	bad, _, _, _ := e.clients(credentials.NewAccessKeyCredential("nobody", "x"))
	_, err := bad.DescribeRegions(regionsReq())
	wantCode(t, err, "InvalidAccessKeyId.NotFound")
	if httpStatus(err) != 404 {
		t.Fatalf("status %d", httpStatus(err))
	}
	// Wrong secret: the SDK compares the server's string to sign with its own
	// and, finding them equal, reports a bad secret.
	wrong, _, _, _ := e.clients(credentials.NewAccessKeyCredential("emulator", "wrong"))
	_, err = wrong.DescribeRegions(regionsReq())
	wantCode(t, err, "SignatureDoesNotMatch")
	if !strings.Contains(err.Error(), "InvalidAccessKeySecret") {
		t.Fatalf("SDK did not recognise the server string to sign: %v", err)
	}
	// Clock 20 minutes off.
	e.s.clockSkew.Store(int64(20 * time.Minute))
	_, err = e.ecs.DescribeRegions(regionsReq())
	wantCode(t, err, "InvalidTimeStamp.Expired")
	e.s.clockSkew.Store(0)
	// Replayed nonce: a transport that sends every request twice.
	replay, _, _, _ := e.clients(credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	replay.SetTransport(replayTransport{})
	_, err = replay.DescribeRegions(regionsReq())
	wantCode(t, err, "SignatureNonceUsed")
	// GET is accepted as well as POST.
	r := regionsReq()
	r.Method = "GET"
	_, err = e.ecs.DescribeRegions(r)
	must(t, err)
	st := e.s.Stats()
	if st.Errors["SignatureDoesNotMatch"] != 1 || st.Errors["InvalidAccessKeyId.NotFound"] != 1 || st.Calls["DescribeRegions"] < 5 {
		t.Fatalf("stats: %+v", st)
	}
}

// replayTransport sends a request, then the identical request again, and
// answers with the second response.
type replayTransport struct{}

func (replayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	r1 := r.Clone(r.Context())
	r1.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultTransport.RoundTrip(r1)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	return http.DefaultTransport.RoundTrip(r2)
}

func TestSTSAssumeRole(t *testing.T) {
	e := newEnv(t, Config{})
	a := sts.CreateAssumeRoleRequest()
	a.RoleArn = "acs:ram::1234567890:role/gpucluster-admin"
	a.RoleSessionName = "terraform"
	resp, err := e.sts.AssumeRole(a)
	must(t, err)
	c := resp.Credentials
	if !strings.HasPrefix(c.AccessKeyId, "STS.") || c.SecurityToken == "" || c.Expiration == "" {
		t.Fatalf("credentials: %+v", c)
	}
	tmp, _, _, _ := e.clients(credentials.NewStsTokenCredential(c.AccessKeyId, c.AccessKeySecret, c.SecurityToken))
	_, err = tmp.DescribeRegions(regionsReq())
	must(t, err)
	badTok, _, _, _ := e.clients(credentials.NewStsTokenCredential(c.AccessKeyId, c.AccessKeySecret, "forged"))
	_, err = badTok.DescribeRegions(regionsReq())
	wantCode(t, err, "InvalidSecurityToken.MismatchWithAccessKey")
	noTok, _, _, _ := e.clients(credentials.NewAccessKeyCredential(c.AccessKeyId, c.AccessKeySecret))
	_, err = noTok.DescribeRegions(regionsReq())
	wantCode(t, err, "MissingSecurityToken")
	e.s.clockSkew.Store(int64(2 * time.Hour))
	_, err = tmp.DescribeRegions(regionsReq())
	e.s.clockSkew.Store(0)
	if code := apiCode(err); code != "InvalidSecurityToken.Expired" && code != "InvalidTimeStamp.Expired" {
		t.Fatalf("expired token accepted: %v", err)
	}
	a2 := sts.CreateAssumeRoleRequest()
	a2.RoleArn, a2.RoleSessionName = "not-an-arn", "x1"
	_, err = e.sts.AssumeRole(a2)
	wantCode(t, err, "InvalidParameter.RoleArn")
}

func TestFaults(t *testing.T) {
	e := newEnv(t, Config{})
	e.s.SetFaults(Faults{ThrottleRate: 1})
	_, err := e.ecs.DescribeRegions(regionsReq())
	wantCode(t, err, "Throttling.User")
	if httpStatus(err) != 400 {
		t.Fatalf("throttle status %d", httpStatus(err))
	}
	e.s.SetFaults(Faults{UnavailableRate: 1})
	_, err = e.ecs.DescribeRegions(regionsReq())
	wantCode(t, err, "ServiceUnavailable")
	if httpStatus(err) != 503 {
		t.Fatalf("unavailable status %d", httpStatus(err))
	}
	e.s.SetFaults(Faults{ResetRate: 1})
	_, err = e.ecs.DescribeRegions(regionsReq())
	if err == nil || httpStatus(err) != 0 {
		t.Fatalf("want a transport error, got %v", err)
	}
	// Admin API: PUT faults with latency, then clear with {}.
	put(t, e.srv.URL+"/_emulator/faults", `{"latency_ms": 150}`)
	start := time.Now()
	_, err = e.ecs.DescribeRegions(regionsReq())
	must(t, err)
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("latency not injected")
	}
	put(t, e.srv.URL+"/_emulator/faults", `{}`)
	st := e.s.Stats()
	if st.Errors["Throttling.User"] != 1 || st.Errors["ServiceUnavailable"] != 1 || st.Errors["ConnectionReset"] != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

func put(t *testing.T, url, body string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}

func TestAdminAPI(t *testing.T) {
	e := newEnv(t, Config{})
	get := func(path string) map[string]any {
		resp, err := http.Get(e.srv.URL + path)
		must(t, err)
		defer resp.Body.Close()
		var m map[string]any
		must(t, json.NewDecoder(resp.Body).Decode(&m))
		return m
	}
	res := get("/_emulator/resources")
	for _, k := range []string{"instances", "vpcs", "vswitches", "security_groups", "deployment_sets", "hpc_clusters", "file_systems", "buckets"} {
		if l, ok := res[k].([]any); !ok || len(l) != 0 {
			t.Fatalf("%s: want [], got %#v", k, res[k])
		}
	}
	f := e.network("10.0.0.0/16", "10.0.0.0/24")
	put(t, e.srv.URL+"/_emulator/capacity", `{"`+f.zone+`": {"ecs.gn7i-c8g1.2xlarge": 0}}`)
	_, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 1))
	wantCode(t, err, "OperationDenied.NoStock")
	st := get("/_emulator/stats")
	if st["total"].(float64) < 5 || st["calls"].(map[string]any)["CreateVpc"].(float64) != 1 ||
		st["errors"].(map[string]any)["OperationDenied.NoStock"].(float64) != 1 {
		t.Fatalf("stats: %v", st)
	}
	if n := len(get("/_emulator/resources")["vpcs"].([]any)); n != 1 {
		t.Fatalf("vpcs: %d", n)
	}
	resp, err := http.Post(e.srv.URL+"/_emulator/reset", "application/json", nil)
	must(t, err)
	resp.Body.Close()
	if n := len(get("/_emulator/resources")["vpcs"].([]any)); n != 0 {
		t.Fatal("reset left vpcs")
	}
	if get("/_emulator/stats")["total"].(float64) != 0 {
		t.Fatal("reset left counters")
	}
}

func TestVPCAndDependencies(t *testing.T) {
	e := newEnv(t, Config{BootTime: 200 * time.Millisecond})
	cv := vpc.CreateCreateVpcRequest()
	cv.RegionId, cv.CidrBlock = testRegion, "10.0.0.0/16"
	r, err := e.vpc.CreateVpc(cv)
	must(t, err)
	if r.VRouterId == "" || r.RouteTableId == "" || r.ResourceGroupId == "" {
		t.Fatalf("create vpc: %+v", r)
	}
	cs := vpc.CreateCreateVSwitchRequest()
	cs.RegionId, cs.VpcId, cs.ZoneId, cs.CidrBlock = testRegion, r.VpcId, testRegion+"-a", "10.0.0.0/24"
	_, err = e.vpc.CreateVSwitch(cs)
	wantCode(t, err, "IncorrectVpcStatus") // still Pending
	e.waitVpc(r.VpcId)
	bad := []struct{ cidr, zone, code string }{
		{"10.1.0.0/24", testRegion + "-a", "InvalidCidrBlock.Malformed"}, // outside the VPC
		{"10.0.0.0/30", testRegion + "-a", "InvalidCidrBlock.Malformed"}, // mask /30
		{"10.0.0.0/24", testRegion + "-z", "InvalidZoneId.NotFound"},
	}
	for _, b := range bad {
		c := vpc.CreateCreateVSwitchRequest()
		c.RegionId, c.VpcId, c.ZoneId, c.CidrBlock = testRegion, r.VpcId, b.zone, b.cidr
		_, err = e.vpc.CreateVSwitch(c)
		wantCode(t, err, b.code)
	}
	sw, err := e.vpc.CreateVSwitch(cs)
	must(t, err)
	c2 := vpc.CreateCreateVSwitchRequest()
	c2.RegionId, c2.VpcId, c2.ZoneId, c2.CidrBlock = testRegion, r.VpcId, testRegion+"-b", "10.0.0.128/25"
	_, err = e.vpc.CreateVSwitch(c2)
	wantCode(t, err, "InvalidCidrBlock.Overlapped")
	dv := vpc.CreateDescribeVSwitchesRequest()
	dv.RegionId, dv.VpcId = testRegion, r.VpcId
	vl, err := e.vpc.DescribeVSwitches(dv)
	must(t, err)
	if len(vl.VSwitches.VSwitch) != 1 || vl.VSwitches.VSwitch[0].Status != "Pending" || vl.VSwitches.VSwitch[0].ZoneId != testRegion+"-a" {
		t.Fatalf("describe vswitches: %+v", vl.VSwitches)
	}
	mv := vpc.CreateModifyVpcAttributeRequest()
	mv.RegionId, mv.VpcId, mv.VpcName = testRegion, r.VpcId, "renamed"
	_, err = e.vpc.ModifyVpcAttribute(mv)
	must(t, err)
	ms := vpc.CreateModifyVSwitchAttributeRequest()
	ms.RegionId, ms.VSwitchId, ms.VSwitchName = testRegion, sw.VSwitchId, "sw-renamed"
	_, err = e.vpc.ModifyVSwitchAttribute(ms)
	must(t, err)
	d := vpc.CreateDescribeVpcsRequest()
	d.RegionId, d.VpcId = testRegion, r.VpcId
	dl, err := e.vpc.DescribeVpcs(d)
	must(t, err)
	if v := dl.Vpcs.Vpc[0]; v.VpcName != "renamed" || len(v.VSwitchIds.VSwitchId) != 1 {
		t.Fatalf("describe vpc: %+v", v)
	}
	sg := ecs.CreateCreateSecurityGroupRequest()
	sg.RegionId, sg.VpcId = testRegion, r.VpcId
	g, err := e.ecs.CreateSecurityGroup(sg)
	must(t, err)
	f := fixture{vpcID: r.VpcId, vswID: sw.VSwitchId, sgID: g.SecurityGroupId}
	ir, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1))
	must(t, err)

	dvpc := vpc.CreateDeleteVpcRequest()
	dvpc.RegionId, dvpc.VpcId = testRegion, r.VpcId
	_, err = e.vpc.DeleteVpc(dvpc)
	wantCode(t, err, "DependencyViolation.Instance")
	dsw := vpc.CreateDeleteVSwitchRequest()
	dsw.RegionId, dsw.VSwitchId = testRegion, sw.VSwitchId
	_, err = e.vpc.DeleteVSwitch(dsw)
	wantCode(t, err, "DependencyViolation")
	del := ecs.CreateDeleteInstancesRequest()
	del.RegionId, del.InstanceId = testRegion, &ir.InstanceIdSets.InstanceIdSet
	del.Force = "true"
	_, err = e.ecs.DeleteInstances(del)
	must(t, err)
	// A NAS mount target also holds the vSwitch.
	cf := nas.CreateCreateFileSystemRequest()
	cf.RegionId, cf.StorageType, cf.ProtocolType = testRegion, "Capacity", "NFS"
	fs, err := e.nas.CreateFileSystem(cf)
	must(t, err)
	cm := nas.CreateCreateMountTargetRequest()
	cm.RegionId, cm.FileSystemId, cm.NetworkType, cm.VpcId, cm.VSwitchId = testRegion, fs.FileSystemId, "Vpc", r.VpcId, sw.VSwitchId
	mt, err := e.nas.CreateMountTarget(cm)
	must(t, err)
	_, err = e.vpc.DeleteVSwitch(dsw)
	wantCode(t, err, "DependencyViolation")
	dm := nas.CreateDeleteMountTargetRequest()
	dm.RegionId, dm.FileSystemId, dm.MountTargetDomain = testRegion, fs.FileSystemId, mt.MountTargetDomain
	_, err = e.nas.DeleteMountTarget(dm)
	must(t, err)
	_, err = e.vpc.DeleteVSwitch(dsw)
	must(t, err)
	_, err = e.vpc.DeleteVpc(dvpc)
	wantCode(t, err, "DependencyViolation.SecurityGroup")
	dg := ecs.CreateDeleteSecurityGroupRequest()
	dg.RegionId, dg.SecurityGroupId = testRegion, g.SecurityGroupId
	_, err = e.ecs.DeleteSecurityGroup(dg)
	must(t, err)
	_, err = e.vpc.DeleteVpc(dvpc)
	must(t, err)
	_, err = e.vpc.DeleteVpc(dvpc)
	wantCode(t, err, "InvalidVpcId.NotFound")
}

func TestNAS(t *testing.T) {
	// Each phase lasts half the boot time: long enough to be seen on a loaded machine.
	e := newEnv(t, Config{BootTime: 3 * time.Second})
	f := e.network("10.0.0.0/16", "10.0.0.0/24")
	cf := nas.CreateCreateFileSystemRequest()
	cf.RegionId, cf.FileSystemType, cf.StorageType, cf.ProtocolType, cf.ZoneId, cf.Capacity =
		testRegion, "extreme", "Capacity", "NFS", f.zone, "100"
	_, err := e.nas.CreateFileSystem(cf)
	wantCode(t, err, "InvalidStorageType.NotSupported")
	cf = nas.CreateCreateFileSystemRequest()
	cf.RegionId, cf.FileSystemType, cf.StorageType, cf.ProtocolType, cf.ZoneId, cf.Capacity =
		testRegion, "extreme", "advance", "NFS", f.zone, "300000"
	_, err = e.nas.CreateFileSystem(cf)
	wantCode(t, err, "InvalidCapacity.OutOfRange") // above 256 TiB
	cf.Capacity = "1024"
	fs, err := e.nas.CreateFileSystem(cf)
	must(t, err)
	df := nas.CreateDescribeFileSystemsRequest()
	df.RegionId, df.FileSystemId = testRegion, fs.FileSystemId
	got, err := e.nas.DescribeFileSystems(df)
	must(t, err)
	if x := got.FileSystems.FileSystem[0]; x.Status != "Pending" || x.FileSystemType != "extreme" || x.Capacity != 1024 {
		t.Fatalf("describe fs: %+v", x)
	}
	up := nas.CreateUpgradeFileSystemRequest()
	up.RegionId, up.FileSystemId, up.Capacity = testRegion, fs.FileSystemId, "2048"
	_, err = e.nas.UpgradeFileSystem(up)
	wantCode(t, err, "IncorrectFileSystemStatus")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got, err := e.nas.DescribeFileSystems(df)
		must(t, err)
		if got.FileSystems.FileSystem[0].Status != "Pending" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("file system stayed Pending for 30 s")
		}
	}
	_, err = e.nas.UpgradeFileSystem(up)
	must(t, err)
	got, err = e.nas.DescribeFileSystems(df)
	must(t, err)
	if x := got.FileSystems.FileSystem[0]; x.Status != "Extending" || x.Capacity != 2048 {
		t.Fatalf("after upgrade: %+v", x)
	}
	mf := nas.CreateModifyFileSystemRequest()
	mf.RegionId, mf.FileSystemId, mf.Description = testRegion, fs.FileSystemId, "scratch"
	_, err = e.nas.ModifyFileSystem(mf)
	must(t, err)
	for i := 0; i < 3; i++ {
		cm := nas.CreateCreateMountTargetRequest()
		cm.RegionId, cm.FileSystemId, cm.NetworkType, cm.VpcId, cm.VSwitchId = testRegion, fs.FileSystemId, "Vpc", f.vpcID, f.vswID
		_, err = e.nas.CreateMountTarget(cm)
		if i < 2 {
			must(t, err)
		} else {
			wantCode(t, err, "QuotaExceed.MountTarget")
		}
	}
	dm := nas.CreateDescribeMountTargetsRequest()
	dm.RegionId, dm.FileSystemId = testRegion, fs.FileSystemId
	mts, err := e.nas.DescribeMountTargets(dm)
	must(t, err)
	if len(mts.MountTargets.MountTarget) != 2 || mts.MountTargets.MountTarget[0].VswId != f.vswID {
		t.Fatalf("mount targets: %+v", mts.MountTargets)
	}
	del := nas.CreateDeleteFileSystemRequest()
	del.RegionId, del.FileSystemId = testRegion, fs.FileSystemId
	_, err = e.nas.DeleteFileSystem(del)
	wantCode(t, err, "DependencyViolation")
	for _, m := range mts.MountTargets.MountTarget {
		d := nas.CreateDeleteMountTargetRequest()
		d.RegionId, d.FileSystemId, d.MountTargetDomain = testRegion, fs.FileSystemId, m.MountTargetDomain
		_, err = e.nas.DeleteMountTarget(d)
		must(t, err)
	}
	_, err = e.nas.DeleteFileSystem(del)
	must(t, err)
	_, err = e.nas.DescribeMountTargets(dm)
	wantCode(t, err, "InvalidFileSystem.NotFound")
}

func TestPersistenceAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s1, err := New(Config{StateFile: path})
	must(t, err)
	url, err := s1.Start("127.0.0.1:0")
	must(t, err)
	e := &env{t: t, s: s1, host: strings.TrimPrefix(url, "http://")}
	e.ecs, e.vpc, e.nas, e.sts = e.clients(credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	f := e.network("10.0.0.0/16", "10.0.0.0/24")
	r := e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 3)
	r.Tag = &[]ecs.RunInstancesTag{{Key: "k", Value: "v"}}
	r.ClientToken = "persist"
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	stop := ecs.CreateStopInstancesRequest()
	stop.RegionId, stop.InstanceId = testRegion, &[]string{resp.InstanceIdSets.InstanceIdSet[0]}
	_, err = e.ecs.StopInstances(stop)
	must(t, err)
	before := s1.Resources()
	must(t, s1.Close())
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}

	s2, err := New(Config{StateFile: path})
	must(t, err)
	url2, err := s2.Start("127.0.0.1:0")
	must(t, err)
	defer func() { _ = s2.Close() }()
	e2 := &env{t: t, s: s2, host: strings.TrimPrefix(url2, "http://")}
	e2.ecs, e2.vpc, e2.nas, e2.sts = e2.clients(credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	after := s2.Resources()
	bj, _ := json.Marshal(before)
	aj, _ := json.Marshal(after)
	if string(bj) != string(aj) {
		t.Fatalf("resources differ after restart:\n%s\n%s", bj, aj)
	}
	got := e2.describe(resp.InstanceIdSets.InstanceIdSet)
	if len(got) != 3 || got[0].Status != "Stopped" || got[1].Status != "Running" {
		t.Fatalf("after restart: %d instances, statuses %s/%s", len(got), got[0].Status, got[1].Status)
	}
	// Indices and idempotency survive too.
	d := ecs.CreateDescribeInstancesRequest()
	d.RegionId = testRegion
	d.Tag = &[]ecs.DescribeInstancesTag{{Key: "k", Value: "v"}}
	tl, err := e2.ecs.DescribeInstances(d)
	must(t, err)
	if len(tl.Instances.Instance) != 3 {
		t.Fatalf("tag index after restart: %d", len(tl.Instances.Instance))
	}
	r2 := e2.runReq(f, "ecs.gn7i-c8g1.2xlarge", 3)
	r2.Tag = &[]ecs.RunInstancesTag{{Key: "k", Value: "v"}}
	r2.ClientToken = "persist"
	again, err := e2.ecs.RunInstances(r2)
	must(t, err)
	if strings.Join(again.InstanceIdSets.InstanceIdSet, ",") != strings.Join(resp.InstanceIdSets.InstanceIdSet, ",") {
		t.Fatal("idempotency lost across restart")
	}
	// New ids do not collide with restored ones.
	more, err := e2.ecs.RunInstances(e2.runReq(f, "ecs.gn7i-c8g1.2xlarge", 1))
	must(t, err)
	for _, id := range resp.InstanceIdSets.InstanceIdSet {
		if id == more.InstanceIdSets.InstanceIdSet[0] {
			t.Fatal("id reused after restart")
		}
	}
}
