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
