package oss_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// signV4WithDate signs a GET of /bucket/key with OSS signature V4 as a client that dates it with
// the Date header instead of x-oss-date does: the canonical request lists x-oss-content-sha256 as
// its only header, and the string to sign carries the Date in ISO 8601. Written from the vendor's
// description of V4 (https://www.alibabacloud.com/help/en/oss/developer-reference/recommend-to-use-signature-version-4),
// not from the emulator's code.
func signV4WithDate(req *http.Request, bucket, key, secret string, at time.Time) {
	datetime, date := at.UTC().Format("20060102T150405Z"), at.UTC().Format("20060102")
	req.Header.Set("Date", at.UTC().Format(http.TimeFormat))
	req.Header.Set("x-oss-content-sha256", "UNSIGNED-PAYLOAD")
	canonical := "GET\n/" + bucket + "/" + key + "\n\nx-oss-content-sha256:UNSIGNED-PAYLOAD\n\n\nUNSIGNED-PAYLOAD"
	sum := sha256.Sum256([]byte(canonical))
	scope := date + "/" + region + "/oss/aliyun_v4_request"
	toSign := "OSS4-HMAC-SHA256\n" + datetime + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	k := []byte("aliyun_v4" + secret)
	for _, part := range []string{date, region, "oss", "aliyun_v4_request", toSign} {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(part))
		k = m.Sum(nil)
	}
	req.Header.Set("Authorization", "OSS4-HMAC-SHA256 Credential="+testAK+"/"+scope+",Signature="+hex.EncodeToString(k))
}

// A V4 request dated by its Date header (no x-oss-date) is read as signed at that time; a Date in
// the ISO form, a wrong signature or no date at all is refused.
func TestSignatureV4DatedByDateHeader(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "dated")
	_, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("dated"), Key: oss.Ptr("k"), Body: strings.NewReader("hello")})
	mustOK(t, err)

	get := func(mutate func(*http.Request)) *http.Response {
		req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/dated/k", nil)
		mustOK(t, err)
		signV4WithDate(req, "dated", "k", testSecret, time.Now())
		mutate(req)
		resp, err := http.DefaultClient.Do(req)
		mustOK(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := get(func(*http.Request) {}); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET signed with Date: status %d (%s)", resp.StatusCode, errorCode(t, resp))
	}
	for name, c := range map[string]struct {
		mutate func(*http.Request)
		status int
		code   string
	}{
		"Date in ISO 8601": {func(r *http.Request) { r.Header.Set("Date", time.Now().UTC().Format("20060102T150405Z")) }, http.StatusBadRequest, "InvalidArgument"},
		"no date":          {func(r *http.Request) { r.Header.Del("Date") }, http.StatusBadRequest, "InvalidArgument"},
		"Date not the signed one": {func(r *http.Request) {
			r.Header.Set("Date", time.Now().Add(-5*time.Minute).UTC().Format(http.TimeFormat))
		}, http.StatusForbidden, "SignatureDoesNotMatch"},
		"Date an hour off": {func(r *http.Request) { r.Header.Set("Date", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)) }, http.StatusForbidden, "RequestTimeTooSkewed"},
	} {
		resp := get(c.mutate)
		if got := errorCode(t, resp); resp.StatusCode != c.status || got != c.code {
			t.Errorf("%s: status %d %s, want %d %s", name, resp.StatusCode, got, c.status, c.code)
		}
	}
}
