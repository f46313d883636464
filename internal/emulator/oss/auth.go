package oss

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"
)

// defaultRegion is used where the request does not name one (V1 signatures
// and anonymous calls carry no region).
const defaultRegion = "cn-wulanchabu"

// maxClockSkew is how far the client's clock may drift before OSS answers
// RequestTimeTooSkewed (the SDK then corrects its clock and retries).
const maxClockSkew = 15 * time.Minute

// authenticate checks whichever signature the request carries: V4 or V1, in
// the Authorization header or presigned in the query. Requests with none are
// anonymous and only pass for public operations on a bucket whose ACL allows
// them.
func (c *call) authenticate(op operation) *ossError {
	c.region = defaultRegion
	auth := c.r.Header.Get("Authorization")
	q := c.r.URL.Query()
	switch {
	case strings.HasPrefix(auth, algorithmV4+" "):
		return c.verifyV4Header(strings.TrimPrefix(auth, algorithmV4+" "))
	case strings.HasPrefix(auth, "OSS "):
		return c.verifyV1Header(strings.TrimPrefix(auth, "OSS "))
	case auth != "":
		return errInvalidArgument("Authorization", "", "Authorization header is invalid.")
	case q.Get("x-oss-signature-version") != "":
		return c.verifyV4Query()
	case q.Get("OSSAccessKeyId") != "" || q.Get("Signature") != "":
		return c.verifyV1Query()
	}
	c.anonymous = true
	if !op.public {
		return errAccessDenied("You have no right to access this resource: anonymous access is not allowed.")
	}
	return c.authorizeAnonymous()
}

// useKey resolves the access key a request is signed with and, for a temporary (STS) key, checks
// the security token it brings: missing or not the key's is EC 0002-00000006
// (https://www.alibabacloud.com/help/en/oss/support/0002-00000006), past its expiry EC
// 0002-00000007 (https://www.alibabacloud.com/help/en/oss/support/0002-00000007). It runs
// before the clock and the signature are checked, as the RPC side does, so a key that expired
// is told so whatever the request's time. The key is kept for authorization (c.caller).
func (c *call) useKey(ak string) *ossError {
	var k Key
	ok := false
	if c.h.cfg.Credentials != nil {
		k, ok = c.h.cfg.Credentials(ak)
	}
	if !ok {
		e := newError(http.StatusForbidden, "InvalidAccessKeyId",
			"The OSS Access Key Id you provided does not exist in our records.")
		e.accessKeyID = ak
		return e
	}
	if k.Token != "" {
		if got := c.securityToken(); subtle.ConstantTimeCompare([]byte(got), []byte(k.Token)) != 1 {
			return newError(http.StatusForbidden, "InvalidSecurityToken", "The security token you provided is invalid.")
		}
		if c.h.now().After(k.Expires) {
			return newError(http.StatusForbidden, "SecurityTokenExpired", "The security token you provided has expired.")
		}
	}
	c.caller = k
	return nil
}

// securityToken is the token a request brings: the x-oss-security-token header, or in a
// presigned URL the security-token (V1) or x-oss-security-token (V4) parameter.
func (c *call) securityToken() string {
	if t := c.r.Header.Get("x-oss-security-token"); t != "" {
		return t
	}
	q := c.r.URL.Query()
	if t := q.Get("x-oss-security-token"); t != "" {
		return t
	}
	return q.Get("security-token")
}

// checkSkew rejects requests whose signing time is too far from the server
// clock, as OSS does for header signatures.
func (c *call) checkSkew(t time.Time) *ossError {
	d := c.h.now().Sub(t)
	if d < 0 {
		d = -d
	}
	if d > maxClockSkew {
		return newError(http.StatusForbidden, "RequestTimeTooSkewed",
			"The difference between the request time and the current time is too large.")
	}
	return nil
}

func signatureMismatch(ak, provided, stringToSign, canonical string) *ossError {
	e := newError(http.StatusForbidden, "SignatureDoesNotMatch",
		"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	e.accessKeyID = ak
	e.signatureProvided = provided
	e.stringToSign = stringToSign
	e.canonicalRequest = canonical
	return e
}

// authorizeAnonymous lets unsigned requests read (and, for
// public-read-write, write) objects in public buckets, unless Block Public
// Access is on. Missing buckets are reported as such, like OSS does.
func (c *call) authorizeAnonymous() *ossError {
	c.h.mu.RLock()
	defer c.h.mu.RUnlock()
	b, ok := c.h.buckets[c.bucket]
	if !ok {
		return errNoSuchBucket(c.bucket)
	}
	if b.BlockPublicAccess {
		return errAccessDenied("Public access is blocked for this bucket.")
	}
	acl := b.ACL
	if o, ok := b.Objects[c.key]; ok && o.ACL != "" && o.ACL != aclDefault {
		acl = o.ACL
	}
	read := c.r.Method == http.MethodGet || c.r.Method == http.MethodHead
	if acl == aclPublicReadWrite || (read && acl == aclPublicRead) {
		return nil
	}
	return errAccessDenied("You have no right to access this object because of bucket acl.")
}
