package sts

import (
	"strings"
	"testing"
	"time"

	stssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/sts"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func assume(stores *core.Stores, now time.Time, p core.Params) (*stssdk.AssumeRoleResponse, *core.Error) {
	resp, e := assumeRole(&core.Call{P: p, Action: "AssumeRole", Version: Version, Now: now, ReqID: "req", Stores: stores})
	if e != nil {
		return nil, e
	}
	return resp.(*stssdk.AssumeRoleResponse), nil
}

// A key from AssumeRole is found with its secret and token until its DurationSeconds pass, and
// the next AssumeRole forgets the keys that expired.
func TestAssumeRoleKeysLiveTheirDuration(t *testing.T) {
	stores := core.NewStores()
	now := time.Unix(1_700_000_000, 0)
	p := core.Params{"RoleArn": "acs:ram::1234567890:role/gpucluster-admin", "RoleSessionName": "terraform", "DurationSeconds": "900"}
	resp, e := assume(stores, now, p)
	if e != nil {
		t.Fatal(e)
	}
	cr := resp.Credentials
	if !strings.HasPrefix(cr.AccessKeyId, "STS.") || resp.AssumedRoleUser.Arn != "acs:ram::1234567890:assumed-role/gpucluster-admin/terraform" {
		t.Fatalf("answer: %+v", resp)
	}
	secret, token, exp, ok := StoreIn(stores).Lookup(cr.AccessKeyId)
	if !ok || secret != cr.AccessKeySecret || token != cr.SecurityToken || !exp.Equal(now.Add(900*time.Second)) {
		t.Fatalf("Lookup = %q %q %v %v", secret, token, exp, ok)
	}
	if _, e := assume(stores, now.Add(time.Hour), p); e != nil {
		t.Fatal(e)
	}
	if _, _, _, ok := StoreIn(stores).Lookup(cr.AccessKeyId); ok {
		t.Fatal("an expired key outlived the next AssumeRole")
	}
}

func TestAssumeRoleRefusesWhatTheVendorRefuses(t *testing.T) {
	good := core.Params{"RoleArn": "acs:ram::1:role/r", "RoleSessionName": "s1"}
	for code, change := range map[string]func(core.Params){
		"InvalidParameter.RoleArn":         func(p core.Params) { p["RoleArn"] = "not-an-arn" },
		"InvalidParameter.RoleSessionName": func(p core.Params) { p["RoleSessionName"] = "x" },
		"InvalidParameter.DurationSeconds": func(p core.Params) { p["DurationSeconds"] = "899" },
		"MissingParameter":                 func(p core.Params) { delete(p, "RoleArn") },
	} {
		p := core.Params{}
		for k, v := range good {
			p[k] = v
		}
		change(p)
		if _, e := assume(core.NewStores(), time.Now(), p); e == nil || e.Code != code {
			t.Errorf("%v: answered %v, want %s", p, e, code)
		}
	}
}

// GetCallerIdentity names an AssumeRole key's session by the role it assumed, with the same
// RoleId for every session of a role.
func TestGetCallerIdentityOfAnAssumedRole(t *testing.T) {
	stores := core.NewStores()
	now := time.Unix(1_700_000_000, 0)
	resp, e := assume(stores, now, core.Params{"RoleArn": "acs:ram::1234567890:role/node", "RoleSessionName": "i-1"})
	if e != nil {
		t.Fatal(e)
	}
	call := &core.Call{Action: "GetCallerIdentity", Version: Version, Now: now, ReqID: "req", Stores: stores, AK: resp.Credentials.AccessKeyId}
	got, e := getCallerIdentity(call)
	if e != nil {
		t.Fatal(e)
	}
	id := got.(*stssdk.GetCallerIdentityResponse)
	a := AssumedRole{Account: "1234567890", Role: "node", Session: "i-1"}
	if id.IdentityType != "AssumedRoleUser" || id.AccountId != "1234567890" || id.Arn != "acs:ram::1234567890:assumed-role/node/i-1" ||
		id.RoleId != a.RoleID() || id.PrincipalId != a.RoleID()+":i-1" || id.UserId != "" || id.RequestId != "req" {
		t.Fatalf("identity: %+v", id)
	}
	if resp.AssumedRoleUser.AssumedRoleId != id.PrincipalId {
		t.Errorf("AssumeRole's AssumedRoleId %q is not GetCallerIdentity's PrincipalId %q", resp.AssumedRoleUser.AssumedRoleId, id.PrincipalId)
	}
	other := AssumedRole{Account: "1234567890", Role: "other"}
	if len(a.RoleID()) != 16 || a.RoleID() == other.RoleID() {
		t.Errorf("role ids %q and %q: want 16 digits, one per role", a.RoleID(), other.RoleID())
	}
}
