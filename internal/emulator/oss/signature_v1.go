package oss

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signature V1 ("OSS AccessKeyId:Signature", HMAC-SHA1), as the older SDKs
// and the v2 SDK with SignatureVersionV1 compute it.

// v1SignedSubresources are the query parameters that take part in the V1
// CanonicalizedResource: the SDK's fixed list plus the per-operation
// sub-resources it adds (lifecycle, encryption, ...). The server cannot see
// which per-operation names the client added, so it uses every one the SDK
// knows; they never appear on requests of other operations.
var v1SignedSubresources = setOf(
	// the SDK's requiredSignedParametersMap
	"acl", "bucketInfo", "location", "stat", "delete", "append", "tagging", "objectMeta",
	"uploads", "uploadId", "partNumber", "security-token", "position",
	"response-content-type", "response-content-language", "response-expires",
	"response-cache-control", "response-content-disposition", "response-content-encoding",
	"restore", "callback", "callback-var", "versions", "versioning", "versionId",
	"sequential", "continuation-token", "regionList", "cloudboxes", "symlink",
	// per-operation sub-resources
	"lifecycle", "encryption", "publicAccessBlock", "cors", "logging", "website",
	"referer", "policy", "worm", "wormId", "wormExtend", "replication", "inventory",
	"requestPayment", "resourceGroup", "accessMonitor", "transferAcceleration",
	"httpsConfig", "style", "cname", "metaQuery", "overwriteConfig", "archiveDirectRead",
	"policyStatus", "redundancyTransition", "seal", "cleanRestoredObject", "qos",
)

// verifyV1Header handles "Authorization: OSS AccessKeyId:Signature".
func (c *call) verifyV1Header(cred string) *ossError {
	i := strings.LastIndexByte(cred, ':')
	if i <= 0 {
		return errInvalidArgument("Authorization", "", "Authorization header is invalid: expected OSS AccessKeyId:Signature.")
	}
	ak, sig := cred[:i], cred[i+1:]
	if e := c.useKey(ak); e != nil {
		return e
	}
	date := c.r.Header.Get("Date")
	t, err := http.ParseTime(date)
	if err != nil {
		return newError(http.StatusForbidden, "AccessDenied", "OSS authentication requires a valid Date.")
	}
	if e := c.checkSkew(t); e != nil {
		return e
	}
	return c.checkV1(ak, sig, date)
}

// verifyV1Query handles presigned V1 URLs (OSSAccessKeyId, Expires,
// Signature); the Expires value stands where the Date would be.
func (c *call) verifyV1Query() *ossError {
	q := c.r.URL.Query()
	if e := c.useKey(q.Get("OSSAccessKeyId")); e != nil {
		return e
	}
	expires := q.Get("Expires")
	sec, err := strconv.ParseInt(expires, 10, 64)
	if err != nil {
		return errInvalidArgument("Expires", expires, "Expires is missing or malformed.")
	}
	if c.h.now().After(time.Unix(sec, 0)) {
		return errAccessDenied("Request has expired.")
	}
	return c.checkV1(q.Get("OSSAccessKeyId"), q.Get("Signature"), expires)
}

// checkV1 recomputes the signature with the secret of the key useKey resolved.
func (c *call) checkV1(ak, sig, date string) *ossError {
	sts := c.stringToSignV1(date)
	m := hmac.New(sha1.New, []byte(c.caller.Secret))
	m.Write([]byte(sts))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return signatureMismatch(ak, sig, sts, "")
	}
	return nil
}

// stringToSignV1 is VERB \n Content-MD5 \n Content-Type \n Date \n
// CanonicalizedOSSHeaders CanonicalizedResource.
func (c *call) stringToSignV1(date string) string {
	var names []string
	values := map[string][]string{}
	for k, vals := range c.r.Header {
		low := strings.ToLower(k)
		if strings.HasPrefix(low, "x-oss-") {
			names = append(names, low)
			values[low] = vals
		}
	}
	sort.Strings(names)
	var headers strings.Builder
	for _, k := range names {
		vals := make([]string, len(values[k]))
		for i, v := range values[k] {
			vals[i] = strings.TrimSpace(v)
		}
		headers.WriteString(k + ":" + strings.Join(vals, ",") + "\n")
	}

	// The resource is unescaped, unlike V4's canonical URI.
	resource := "/"
	if c.bucket != "" {
		resource += c.bucket + "/" + c.key
	}
	q := c.r.URL.Query()
	var params []string
	for k := range q {
		if v1SignedSubresources[k] || strings.HasPrefix(k, "x-oss-") {
			params = append(params, k)
		}
	}
	sort.Strings(params)
	for i, k := range params {
		if v := q.Get(k); v != "" {
			params[i] = k + "=" + v
		}
	}
	if len(params) > 0 {
		resource += "?" + strings.Join(params, "&")
	}

	return c.r.Method + "\n" +
		c.r.Header.Get("Content-MD5") + "\n" +
		c.r.Header.Get("Content-Type") + "\n" +
		date + "\n" +
		headers.String() + resource
}
