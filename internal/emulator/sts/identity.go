package sts

import (
	"fmt"
	"hash/fnv"
	"strings"

	stssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/sts"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Who signed a call, in the names RAM and OSS give it. GetCallerIdentity answers it
// (https://www.alibabacloud.com/help/en/ram/developer-reference/api-sts-2015-04-01-getcalleridentity):
// IdentityType Account (the account's own key), RAMUser or AssumedRoleUser (an STS key); UserId
// only for the first two, RoleId only for the last; Arn the caller's ARN.

func init() {
	core.Register(Version, "GetCallerIdentity", core.Route{Fn: getCallerIdentity, NoRegion: true})
}

// AssumedRole is the holder of a temporary key: a role of an account, assumed under a session
// name.
type AssumedRole struct {
	Account, Role, Session string
}

// RoleArn is the role's ARN, as AssumeRole takes it: acs:ram::<account>:role/<name>.
func (a AssumedRole) RoleArn() string { return "acs:ram::" + a.Account + ":role/" + a.Role }

// Arn is the session's ARN, as AssumeRole and GetCallerIdentity answer it:
// acs:ram::<account>:assumed-role/<role>/<session>.
func (a AssumedRole) Arn() string {
	return "acs:ram::" + a.Account + ":assumed-role/" + a.Role + "/" + a.Session
}

// PolicyPrincipal is how an OSS bucket policy names the session: "When you authorize a RAM role,
// the Principal must follow this format: arn:sts::<uid>:assumed-role/<role-name>/<session-name>"
// (https://help.aliyun.com/en/oss/user-guide/bucket-policy/).
func (a AssumedRole) PolicyPrincipal() string {
	return "arn:sts::" + a.Account + ":assumed-role/" + a.Role + "/" + a.Session
}

// RoleID is the role's numeric id. The emulator has no RAM to keep one, so it derives it from
// the role's ARN: the same role always has the same id, as at the vendor.
func (a AssumedRole) RoleID() string { return numericID("3", a.RoleArn()) }

// AssumedRoleID is RoleID:session, AssumeRole's AssumedRoleUser.AssumedRoleId.
func (a AssumedRole) AssumedRoleID() string { return a.RoleID() + ":" + a.Session }

// ParseRoleArn splits acs:ram::<account>:role/<name>; ok is false for anything else.
func ParseRoleArn(arn string) (account, name string, ok bool) {
	if !roleArnRE.MatchString(arn) {
		return "", "", false
	}
	head, name, _ := strings.Cut(arn, ":role/")
	return strings.TrimPrefix(head, "acs:ram::"), name, true
}

// numericID makes a 16-digit id starting with lead from s, the length of the vendor's ids.
func numericID(lead, s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return lead + fmt.Sprintf("%015d", h.Sum64()%1_000_000_000_000_000)
}

// getCallerIdentity answers who signed the call: the session of an STS key, else the account or
// the RAM user that owns the Server's long-term key (Env.KeyUser). An expired STS key never gets
// here: the dispatcher refuses it first, as the vendor does.
func getCallerIdentity(c *core.Call) (any, *core.Error) {
	resp := &stssdk.GetCallerIdentityResponse{RequestId: c.ReqID}
	if a, ok := StoreIn(c.Stores).Holder(c.AK); ok {
		resp.IdentityType, resp.AccountId, resp.Arn = "AssumedRoleUser", a.Account, a.Arn()
		resp.RoleId, resp.PrincipalId = a.RoleID(), a.AssumedRoleID()
		return resp, nil
	}
	resp.AccountId = core.AccountID
	if user := c.Env.KeyUser(); user != "" {
		resp.IdentityType, resp.UserId = "RAMUser", numericID("2", user)
		resp.Arn = "acs:ram::" + core.AccountID + ":user/" + user
	} else {
		// An account's own key answers its id as UserId and acs:ram::<id>:root as Arn.
		resp.IdentityType, resp.UserId = "Account", core.AccountID
		resp.Arn = "acs:ram::" + core.AccountID + ":root"
	}
	resp.PrincipalId = resp.UserId
	return resp, nil
}
