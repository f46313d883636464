package emulator

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	sdkerrors "github.com/aliyun/alibaba-cloud-sdk-go/sdk/errors"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

const testRegion = "cn-wulanchabu"

// env is one emulator behind an httptest server plus real SDK clients.
type env struct {
	t    testing.TB
	s    *Server
	srv  *httptest.Server
	host string
	ecs  *ecs.Client
	vpc  *vpc.Client
	nas  *nas.Client
	sts  *sts.Client
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	e := &env{t: t, s: s, srv: srv, host: strings.TrimPrefix(srv.URL, "http://")}
	t.Cleanup(func() {
		srv.Close()
		_ = s.Close()
	})
	ak, sk := cmp.Or(cfg.AccessKey, "emulator"), cmp.Or(cfg.SecretKey, "emulator-secret")
	e.ecs, e.vpc, e.nas, e.sts = e.clients(credentials.NewAccessKeyCredential(ak, sk))
	return e
}

func sdkConfig() *sdk.Config {
	c := sdk.NewConfig()
	c.Scheme = "HTTP"
	c.AutoRetry = false
	c.Timeout = 20 * time.Second
	return c
}

// clients builds SDK clients for the given credential, pointed at the emulator.
func (e *env) clients(cred auth.Credential) (*ecs.Client, *vpc.Client, *nas.Client, *sts.Client) {
	e.t.Helper()
	if cred == nil {
		cred = credentials.NewAccessKeyCredential("emulator", "emulator-secret")
	}
	ec, err := ecs.NewClientWithOptions(testRegion, sdkConfig(), cred)
	must(e.t, err)
	vc, err := vpc.NewClientWithOptions(testRegion, sdkConfig(), cred)
	must(e.t, err)
	nc, err := nas.NewClientWithOptions(testRegion, sdkConfig(), cred)
	must(e.t, err)
	sc, err := sts.NewClientWithOptions(testRegion, sdkConfig(), cred)
	must(e.t, err)
	for _, c := range []*sdk.Client{&ec.Client, &vc.Client, &nc.Client, &sc.Client} {
		c.Domain = e.host
	}
	return ec, vc, nc, sc
}

// apiCode returns the vendor error code carried by err ("" when err is nil).
func apiCode(err error) string {
	if err == nil {
		return ""
	}
	var se *sdkerrors.ServerError
	if errors.As(err, &se) {
		return se.ErrorCode()
	}
	return "transport: " + err.Error()
}

func httpStatus(err error) int {
	var se *sdkerrors.ServerError
	if errors.As(err, &se) {
		return se.HttpStatus()
	}
	return 0
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := apiCode(err); got != code {
		t.Fatalf("want error code %s, got %q (%v)", code, got, err)
	}
}

// fixture creates a VPC, a vSwitch in zone a and a security group.
type fixture struct{ vpcID, vswID, sgID, zone string }

func (e *env) network(cidr, vswCIDR string) fixture {
	e.t.Helper()
	cv := vpc.CreateCreateVpcRequest()
	cv.RegionId = testRegion
	cv.CidrBlock = cidr
	cv.VpcName = "test"
	r, err := e.vpc.CreateVpc(cv)
	must(e.t, err)
	e.waitVpc(r.VpcId)
	cs := vpc.CreateCreateVSwitchRequest()
	cs.RegionId = testRegion
	cs.VpcId = r.VpcId
	cs.ZoneId = testRegion + "-a"
	cs.CidrBlock = vswCIDR
	sw, err := e.vpc.CreateVSwitch(cs)
	must(e.t, err)
	sg := ecs.CreateCreateSecurityGroupRequest()
	sg.RegionId = testRegion
	sg.VpcId = r.VpcId
	g, err := e.ecs.CreateSecurityGroup(sg)
	must(e.t, err)
	return fixture{vpcID: r.VpcId, vswID: sw.VSwitchId, sgID: g.SecurityGroupId, zone: testRegion + "-a"}
}

// nextStatus polls an instance while its status is from, and returns the status it moves to.
func (e *env) nextStatus(id, from string) string {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got := e.describe([]string{id})
		if len(got) != 1 {
			e.t.Fatalf("instance %s vanished while %s", id, from)
		}
		if got[0].Status != from {
			return got[0].Status
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("instance %s stayed %s for 30 s", id, from)
	return ""
}

// advance moves the emulator's clock forward by d, as POST /_emulator/clock does.
func (e *env) advance(d time.Duration) { e.s.Advance(d) }

// waitVpc returns once the VPC is Available. A VPC is Pending for the first half of the boot
// time (Server.asyncStatus); the emulator's clock is moved across that half rather than slept
// through, so a test with a long boot time can build its network too.
func (e *env) waitVpc(id string) {
	e.t.Helper()
	for range 2 {
		d := vpc.CreateDescribeVpcsRequest()
		d.RegionId = testRegion
		d.VpcId = id
		r, err := e.vpc.DescribeVpcs(d)
		must(e.t, err)
		if len(r.Vpcs.Vpc) == 1 && r.Vpcs.Vpc[0].Status == "Available" {
			return
		}
		e.advance(e.s.cfg.BootTime / 2)
	}
	e.t.Fatalf("vpc %s is not Available once its boot time has passed", id)
}

func (e *env) runReq(f fixture, typ string, amount int) *ecs.RunInstancesRequest {
	r := ecs.CreateRunInstancesRequest()
	r.RegionId = testRegion
	r.ImageId = "ubuntu_22_04_x64_20G_alibase_20240101.vhd"
	r.InstanceType = typ
	r.VSwitchId = f.vswID
	r.SecurityGroupId = f.sgID
	r.Amount = requests.NewInteger(amount)
	r.SystemDiskCategory = "cloud_essd"
	r.SystemDiskSize = "40"
	return r
}

func (e *env) describe(ids []string) []ecs.Instance {
	e.t.Helper()
	r := ecs.CreateDescribeInstancesRequest()
	r.RegionId = testRegion
	r.InstanceIds = jsonIDs(ids)
	r.MaxResults = requests.NewInteger(100)
	resp, err := e.ecs.DescribeInstances(r)
	must(e.t, err)
	return resp.Instances.Instance
}

func jsonIDs(ids []string) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

var _ http.Handler
