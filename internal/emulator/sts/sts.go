// Package sts is the emulator's Security Token Service (API 2015-04-01): AssumeRole hands out
// temporary keys, and the dispatcher accepts them (with their SecurityToken) until they expire;
// GetCallerIdentity tells who signed a call. The instance metadata service hands out keys of an
// instance's RAM role through Store.Issue.
// It stands on package core only: its records are the store "sts".
package sts

import (
	"crypto/rand"
	"encoding/base64"
	"regexp"
	"strings"
	"time"

	stssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/sts"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Version is the STS API version the emulator serves.
const Version = "2015-04-01"

func init() {
	core.RegisterStore(storeName, func() core.Store { return &Store{} })
	core.Register(Version, "AssumeRole", core.Route{Fn: assumeRole, Write: true, NoRegion: true})
}

var (
	roleArnRE     = regexp.MustCompile(`^acs:ram::[0-9]+:role/[A-Za-z0-9._-]+$`)
	sessionNameRE = regexp.MustCompile(`^[A-Za-z0-9.@_-]{2,64}$`)
)

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.TrimRight(base64.URLEncoding.EncodeToString(b), "=")
}

// assumeRole hands out temporary credentials that the dispatcher's authentication accepts
// (with their SecurityToken) until they expire. Any syntactically valid role ARN is assumable:
// the emulator models no RAM policies.
func assumeRole(c *core.Call) (any, *core.Error) {
	arn, e := c.P.Required("RoleArn")
	if e != nil {
		return nil, e
	}
	if !roleArnRE.MatchString(arn) {
		return nil, core.Errf(400, "InvalidParameter.RoleArn", "RoleArn %q must look like acs:ram::<account id>:role/<role name>.", arn)
	}
	session, e := c.P.Required("RoleSessionName")
	if e != nil {
		return nil, e
	}
	if !sessionNameRE.MatchString(session) {
		return nil, core.Errf(400, "InvalidParameter.RoleSessionName", "RoleSessionName must be 2-64 characters of letters, digits, '.', '@', '-', '_'.")
	}
	dur, e := c.P.Int("DurationSeconds", 3600)
	if e != nil {
		return nil, e
	}
	if dur < 900 || dur > 43200 {
		return nil, core.Errf(400, "InvalidParameter.DurationSeconds", "DurationSeconds %d must be 900-43200.", dur)
	}
	a := AssumedRole{Session: session}
	a.Account, a.Role, _ = ParseRoleArn(arn)
	ak, cred := StoreIn(c.Stores).Issue(arn, session, c.Now, time.Duration(dur)*time.Second)
	exp := time.Unix(cred.Expires, 0).UTC()
	return &stssdk.AssumeRoleResponse{
		RequestId:       c.ReqID,
		Credentials:     stssdk.Credentials{AccessKeyId: ak, AccessKeySecret: cred.Secret, SecurityToken: cred.Token, Expiration: exp.Format(core.TimeFormat)},
		AssumedRoleUser: stssdk.AssumedRoleUser{Arn: a.Arn(), AssumedRoleId: a.AssumedRoleID()},
	}, nil
}
