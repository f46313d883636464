package emulator

import (
	"crypto/rand"
	"encoding/base64"
	"regexp"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
)

func init() {
	register(versionSTS, "AssumeRole", route{fn: assumeRole, write: true, noRegion: true})
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

// assumeRole hands out temporary credentials that authenticate() accepts
// (with their SecurityToken) until they expire. Any syntactically valid role
// ARN is assumable: the emulator models no RAM policies.
func assumeRole(c *call) (any, *apiError) {
	arn, e := c.p.Required("RoleArn")
	if e != nil {
		return nil, e
	}
	if !roleArnRE.MatchString(arn) {
		return nil, errf(400, "InvalidParameter.RoleArn", "RoleArn %q must look like acs:ram::<account id>:role/<role name>.", arn)
	}
	session, e := c.p.Required("RoleSessionName")
	if e != nil {
		return nil, e
	}
	if !sessionNameRE.MatchString(session) {
		return nil, errf(400, "InvalidParameter.RoleSessionName", "RoleSessionName must be 2-64 characters of letters, digits, '.', '@', '-', '_'.")
	}
	dur, e := c.p.Int("DurationSeconds", 3600)
	if e != nil {
		return nil, e
	}
	if dur < 900 || dur > 43200 {
		return nil, errf(400, "InvalidParameter.DurationSeconds", "DurationSeconds %d must be 900-43200.", dur)
	}
	d := c.s.db
	for k, cr := range d.STS {
		if cr.Expires < c.now.Unix() {
			delete(d.STS, k)
		}
	}
	ak := "STS." + randomToken(18)
	exp := c.now.Add(time.Duration(dur) * time.Second).UTC()
	cred := &stsCred{Secret: randomToken(30), Token: "CAIS" + randomToken(96), Expires: exp.Unix(), Role: arn}
	d.STS[ak] = cred
	acct := strings.TrimPrefix(strings.Split(arn, ":role/")[0], "acs:ram::")
	return &sts.AssumeRoleResponse{
		RequestId:       c.reqID,
		Credentials:     sts.Credentials{AccessKeyId: ak, AccessKeySecret: cred.Secret, SecurityToken: cred.Token, Expiration: exp.Format(timeFormat)},
		AssumedRoleUser: sts.AssumedRoleUser{Arn: "acs:ram::" + acct + ":assumed-role/" + strings.Split(arn, ":role/")[1] + "/" + session, AssumedRoleId: "3" + randomToken(12) + ":" + session},
	}, nil
}
