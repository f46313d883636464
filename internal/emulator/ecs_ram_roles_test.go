package emulator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// runWithRole starts amount instances carrying the RAM role ("" for none) and answers their ids.
func (e *env) runWithRole(f fixture, role string, amount int) []string {
	e.t.Helper()
	r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", amount)
	r.RamRoleName = role
	resp, err := e.ecs.RunInstances(r)
	must(e.t, err)
	return resp.InstanceIdSets.InstanceIdSet
}

// ramRoles answers DescribeInstanceRamRole as instance id -> role, and the TotalCount.
func (e *env) ramRoles(ids []string, role string, page, size int) (map[string]string, int) {
	e.t.Helper()
	req := ecs.CreateDescribeInstanceRamRoleRequest()
	req.RegionId, req.RamRoleName = testRegion, role
	if ids != nil {
		req.InstanceIds = `["` + strings.Join(ids, `","`) + `"]`
	}
	if page > 0 {
		req.PageNumber, req.PageSize = requests.NewInteger(page), requests.NewInteger(size)
	}
	resp, err := e.ecs.DescribeInstanceRamRole(req)
	must(e.t, err)
	out := map[string]string{}
	for _, s := range resp.InstanceRamRoleSets.InstanceRamRoleSet {
		out[s.InstanceId] = s.RamRoleName
	}
	return out, resp.TotalCount
}

// RunInstances records RamRoleName on each instance it starts; DescribeInstanceRamRole reads it
// back by instance ids or by role, a page at a time, and leaves out instances without a role.
func TestInstanceRamRole(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	cp := e.runWithRole(f, "gpucluster-control-plane", 3)
	other := e.runWithRole(f, "other.role-1", 1)
	none := e.runWithRole(f, "", 1)

	all := slices.Concat(cp, other, none)
	got, total := e.ramRoles(all, "", 0, 0)
	if total != 4 || len(got) != 4 {
		t.Fatalf("by ids: %d listed (TotalCount %d), want the 4 instances with a role: %v", len(got), total, got)
	}
	for _, id := range cp {
		if got[id] != "gpucluster-control-plane" {
			t.Errorf("instance %s has role %q, want gpucluster-control-plane", id, got[id])
		}
	}
	if got[other[0]] != "other.role-1" {
		t.Errorf("instance %s has role %q, want other.role-1", other[0], got[other[0]])
	}
	if _, listed := got[none[0]]; listed {
		t.Errorf("instance %s was started without a role but is listed", none[0])
	}

	byRole, total := e.ramRoles(nil, "gpucluster-control-plane", 0, 0)
	if total != 3 || len(byRole) != 3 {
		t.Fatalf("by role: %v (TotalCount %d), want the 3 control-plane instances", byRole, total)
	}
	// Both filters: the ids that carry that role.
	if both, total := e.ramRoles(all, "other.role-1", 0, 0); total != 1 || both[other[0]] == "" {
		t.Fatalf("by ids and role: %v (TotalCount %d), want %s only", both, total, other[0])
	}
	// Paging: two pages of 2 cover the control-plane instances once each.
	p1, total := e.ramRoles(nil, "gpucluster-control-plane", 1, 2)
	p2, _ := e.ramRoles(nil, "gpucluster-control-plane", 2, 2)
	if total != 3 || len(p1) != 2 || len(p2) != 1 {
		t.Fatalf("pages of 2: %v then %v (TotalCount %d)", p1, p2, total)
	}
	for id := range p2 {
		if _, twice := p1[id]; twice {
			t.Fatalf("instance %s is on both pages", id)
		}
	}
}

// A role name RAM would refuse fails RunInstances naming RamRoleName, and nothing starts; a
// DescribeInstanceRamRole with neither InstanceIds nor RamRoleName, or with too many ids, is refused.
func TestInstanceRamRoleRefused(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	for _, bad := range []string{"bad role!", strings.Repeat("r", 65), "role_with_underscore"} {
		r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1)
		r.RamRoleName = bad
		_, err := e.ecs.RunInstances(r)
		wantCode(t, err, "InvalidParameter")
		if !strings.Contains(err.Error(), "RamRoleName") {
			t.Errorf("RamRoleName %q: the error does not name the parameter: %v", bad, err)
		}
	}
	if n := len(e.s.Resources().Instances); n != 0 {
		t.Fatalf("%d instances started from refused requests", n)
	}
	wantAnswer(t, e.ecsCall("DescribeInstanceRamRole", params{}), 400, "MissingParameter")
	wantAnswer(t, e.ecsCall("DescribeInstanceRamRole", params{"InstanceIds": "i-1,i-2"}), 400, "InvalidInstanceIds.Malformed")
	many := make([]string, emuecs.MaxRamRoleInstanceIDs+1)
	for i := range many {
		many[i] = `"i-x"`
	}
	wantAnswer(t, e.ecsCall("DescribeInstanceRamRole", params{"InstanceIds": "[" + strings.Join(many, ",") + "]"}), 400, "InvalidParameter")
}

// The role is part of the instance's saved state: it is still there after a restart.
func TestInstanceRamRoleSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	start := func() *env {
		s, err := New(Config{StateFile: path, BootTime: 1})
		must(t, err)
		url, err := s.Start("127.0.0.1:0")
		must(t, err)
		e := &env{t: t, s: s, host: strings.TrimPrefix(url, "http://")}
		e.ecs, e.vpc, e.nas, e.sts = e.clients(credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
		return e
	}
	e1 := start()
	ids := e1.runWithRole(e1.network("10.0.0.0/16", "10.0.1.0/24"), "gpucluster-control-plane", 2)
	must(t, e1.s.Close())
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	e2 := start()
	defer func() { _ = e2.s.Close() }()
	got, total := e2.ramRoles(ids, "", 0, 0)
	if total != 2 || got[ids[0]] != "gpucluster-control-plane" || got[ids[1]] != "gpucluster-control-plane" {
		t.Fatalf("after a restart: %v (TotalCount %d), want both instances with gpucluster-control-plane", got, total)
	}
}

// An autoscaling group launches its instances with its configuration's RamRoleName, and a
// configuration with a name RAM would refuse is refused when it is made, not at scale-out.
func TestScalingGroupInstancesCarryTheRamRole(t *testing.T) {
	e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
	f := e.essGroup(0, 4, []string{"ecs.gn6i-c4g1.xlarge"}, func(_ *ess.CreateScalingGroupRequest, cfg *ess.CreateScalingConfigurationRequest) {
		cfg.RamRoleName = "gpucluster-worker"
	})
	e.autoscalerSetSize(f.group, 2)
	e.advance(time.Second)
	var ids []string
	for _, in := range e.scalingInstances(f.group) {
		ids = append(ids, in.InstanceId)
	}
	if got, total := e.ramRoles(ids, "", 0, 0); len(ids) != 2 || total != 2 || got[ids[0]] != "gpucluster-worker" || got[ids[1]] != "gpucluster-worker" {
		t.Fatalf("the group's instances %v carry roles %v, want gpucluster-worker on both", ids, got)
	}

	cfg := ess.CreateCreateScalingConfigurationRequest()
	cfg.RegionId, cfg.ScalingGroupId = testRegion, f.group
	cfg.ImageId, cfg.InstanceTypes, cfg.SecurityGroupId = "ubuntu_22_04_x64_20G_alibase_20240101.vhd", &[]string{"ecs.gn6i-c4g1.xlarge"}, f.sgID
	cfg.RamRoleName = "bad role!"
	_, err := e.essClient().CreateScalingConfiguration(cfg)
	wantCode(t, err, "InvalidParameter")
	if !strings.Contains(err.Error(), "RamRoleName") {
		t.Fatalf("the error does not name RamRoleName: %v", err)
	}
}
