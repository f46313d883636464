package core

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Authenticator checks the signature of an RPC call, V1 (parameters) or V3 (headers), against
// the keys Keys knows, and remembers nonces so a request cannot be replayed.
type Authenticator struct {
	// Keys answers the secret of an AccessKeyId and, for a temporary key, its security token and
	// expiry; ok is false for a key nobody issued.
	Keys   func(ak string) (secret, token string, expires time.Time, ok bool)
	nonces nonceCache
}

// ResetNonces forgets every nonce seen (the admin reset).
func (a *Authenticator) ResetNonces() { a.nonces.reset() }

// signatureWindow is how far a Timestamp may drift and how long a
// SignatureNonce stays used (both 15 minutes at the vendor).
const signatureWindow = 15 * time.Minute

// StringToSign builds the RPC signature v1 string exactly as the SDK does
// (sdk/auth/rpc_signature_composer.go): sorted url-encoding of every
// parameter but Signature, with +,*,%7E fixed up, then percent-encoded again.
func StringToSign(method string, p Params) string {
	vals := make(url.Values, len(p))
	for k, v := range p {
		if k == "Signature" {
			continue
		}
		vals[k] = []string{v}
	}
	s := vals.Encode()
	s = strings.ReplaceAll(s, "+", "%20")
	s = strings.ReplaceAll(s, "*", "%2A")
	s = strings.ReplaceAll(s, "%7E", "~")
	return method + "&%2F&" + url.QueryEscape(s)
}

func SignV1(sts, secret string) string {
	m := hmac.New(sha1.New, []byte(secret+"&"))
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// nonceCache remembers SignatureNonces for the signature window. Entries are
// pruned at most once a minute so a hot path only pays a map insert.
type nonceCache struct {
	mu        sync.Mutex
	seen      map[string]time.Time
	lastPrune time.Time
}

func (c *nonceCache) use(nonce string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]time.Time{}
	}
	if now.Sub(c.lastPrune) > time.Minute {
		for k, t := range c.seen {
			if now.Sub(t) > signatureWindow {
				delete(c.seen, k)
			}
		}
		c.lastPrune = now
	}
	if t, ok := c.seen[nonce]; ok && now.Sub(t) <= signatureWindow {
		return false
	}
	c.seen[nonce] = now
	return true
}

func (c *nonceCache) reset() {
	c.mu.Lock()
	c.seen = map[string]time.Time{}
	c.mu.Unlock()
}

// authenticate checks the v1 signature of an RPC call and returns the
// AccessKeyId it was made with. Order follows the vendor: who is calling,
// then the token, the clock, the signature, and last the nonce (so a
// rejected request does not burn its nonce).
func (a *Authenticator) authenticate(method string, p Params, now time.Time) (string, *Error) {
	ak := p["AccessKeyId"]
	if ak == "" {
		return "", ErrMissing("AccessKeyId")
	}
	secret, token, exp, ok := a.Keys(ak)
	if !ok {
		return "", Errf(404, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
	}
	if e := checkSecurityToken(p["SecurityToken"], token, exp, now); e != nil {
		return "", e
	}
	if p["Signature"] == "" {
		return "", Errf(400, "IncompleteSignature", "The request signature does not conform to Aliyun standards: Signature is missing.")
	}
	if m := p["SignatureMethod"]; m != "" && m != "HMAC-SHA1" {
		return "", Errf(400, "InvalidParameter", "SignatureMethod %q is not supported; use HMAC-SHA1.", m)
	}
	ts := p["Timestamp"]
	if ts == "" {
		return "", ErrMissing("Timestamp")
	}
	if e := checkTimestamp(ts, now); e != nil {
		return "", e
	}
	sts := StringToSign(method, p)
	want := SignV1(sts, secret)
	if subtle.ConstantTimeCompare([]byte(want), []byte(p["Signature"])) != 1 {
		// The SDK compares the server's string with its own to tell a bad
		// secret from an encoding bug, so the string must be exact.
		return "", Errf(403, "SignatureDoesNotMatch", "Specified signature is not matched with our calculation. server string to sign is:%s", sts)
	}
	nonce := p["SignatureNonce"]
	if nonce == "" {
		return "", ErrMissing("SignatureNonce")
	}
	if !a.nonces.use(ak+"\x00"+nonce, now) {
		return "", Errf(400, "SignatureNonceUsed", "Specified signature nonce was used already.")
	}
	return ak, nil
}

// checkSecurityToken checks the token sent with a key: temporary (STS) keys
// must bring theirs, unexpired; long-term keys have none to check.
func checkSecurityToken(got, want string, exp, now time.Time) *Error {
	if want == "" {
		return nil
	}
	switch {
	case got == "":
		return Errf(400, "MissingSecurityToken", "SecurityToken is mandatory for temporary access keys.")
	case subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1:
		return Errf(400, "InvalidSecurityToken.MismatchWithAccessKey", "The SecurityToken does not match the AccessKeyId.")
	case now.After(exp):
		return Errf(400, "InvalidSecurityToken.Expired", "Specified SecurityToken is expired.")
	}
	return nil
}

// checkTimestamp checks a request time (ISO 8601 UTC, whole seconds) is
// within the signature window of the server clock.
func checkTimestamp(ts string, now time.Time) *Error {
	t, err := time.Parse("2006-01-02T15:04:05Z", ts)
	if err != nil {
		return Errf(400, "InvalidTimeStamp.Format", "Specified time stamp %q is not in the format 2006-01-02T15:04:05Z.", ts)
	}
	if d := now.Sub(t); d > signatureWindow || d < -signatureWindow {
		return Errf(400, "InvalidTimeStamp.Expired", "Specified time stamp or date value is expired: %s is more than 15 minutes from the server time %s.", ts, now.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return nil
}
