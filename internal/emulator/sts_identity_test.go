package emulator

import (
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

// OSS shows the account the RPC side is as every bucket's owner.
func TestOneAccountOnBothSides(t *testing.T) {
	if core.AccountID != oss.OwnerID {
		t.Fatalf("core.AccountID %s, oss.OwnerID %s: the emulator is one account", core.AccountID, oss.OwnerID)
	}
}

func callerIdentity(t *testing.T, c *sts.Client) *sts.GetCallerIdentityResponse {
	t.Helper()
	resp, err := c.GetCallerIdentity(sts.CreateGetCallerIdentityRequest())
	must(t, err)
	return resp
}

// GetCallerIdentity through the SDK: the account's own key, a RAM user's key, and an
// AssumeRole key, which is refused once it has expired.
func TestGetCallerIdentityThroughTheSDK(t *testing.T) {
	e := newEnv(t, Config{})
	id := callerIdentity(t, e.sts)
	if id.IdentityType != "Account" || id.AccountId != core.AccountID || id.UserId != core.AccountID ||
		id.PrincipalId != core.AccountID || id.Arn != "acs:ram::"+core.AccountID+":root" || id.RoleId != "" || id.RequestId == "" {
		t.Fatalf("the account's own key: %+v", id)
	}

	u := callerIdentity(t, newEnv(t, Config{KeyUser: "deployer"}).sts)
	if u.IdentityType != "RAMUser" || u.AccountId != core.AccountID || u.Arn != "acs:ram::"+core.AccountID+":user/deployer" ||
		u.UserId == "" || u.UserId == core.AccountID || u.PrincipalId != u.UserId || u.RoleId != "" {
		t.Fatalf("a RAM user's key: %+v", u)
	}

	a := sts.CreateAssumeRoleRequest()
	a.RoleArn, a.RoleSessionName, a.DurationSeconds = "acs:ram::"+core.AccountID+":role/gpucluster-node", "bootstrap", "900"
	cr, err := e.sts.AssumeRole(a)
	must(t, err)
	c := cr.Credentials
	_, _, _, tmp := e.clients(credentials.NewStsTokenCredential(c.AccessKeyId, c.AccessKeySecret, c.SecurityToken))
	r := callerIdentity(t, tmp)
	if r.IdentityType != "AssumedRoleUser" || r.AccountId != core.AccountID || r.UserId != "" || r.RoleId == "" ||
		r.Arn != "acs:ram::"+core.AccountID+":assumed-role/gpucluster-node/bootstrap" || r.PrincipalId != cr.AssumedRoleUser.AssumedRoleId {
		t.Fatalf("an assumed role: %+v (AssumeRole answered %+v)", r, cr.AssumedRoleUser)
	}

	e.advance(16 * time.Minute) // past DurationSeconds; the token is checked before the clock
	_, err = tmp.GetCallerIdentity(sts.CreateGetCallerIdentityRequest())
	wantCode(t, err, "InvalidSecurityToken.Expired")
}
