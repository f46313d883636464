package oss

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signature V4 (OSS4-HMAC-SHA256), rebuilt from the server's view of the
// request exactly as alibabacloud-oss-go-sdk-v2's signer computes it on the
// client, so any drift between the two shows up as SignatureDoesNotMatch.

const (
	algorithmV4      = "OSS4-HMAC-SHA256"
	v4DatetimeFormat = "20060102T150405Z"
	v4DateFormat     = "20060102"
	v4Terminator     = "aliyun_v4_request"
	unsignedPayload  = "UNSIGNED-PAYLOAD"
)

// v4Request is what the client claims in its Authorization header or
// presigned query.
type v4Request struct {
	accessKeyID string
	date        string // yyyymmdd from the credential scope
	region      string
	product     string
	datetime    string // x-oss-date, or the Date header in its form (v4RequestTime)
	additional  []string
	signature   string
	rawQuery    string // the query as signed (presigned URLs drop x-oss-signature)
	hashPayload string
}

// verifyV4Header handles "OSS4-HMAC-SHA256 Credential=AK/date/region/oss/aliyun_v4_request,
// AdditionalHeaders=a;b,Signature=hex".
func (c *call) verifyV4Header(params string) *ossError {
	v := v4Request{rawQuery: c.r.URL.RawQuery}
	var credential string
	for _, part := range strings.Split(params, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			credential = val
		case "AdditionalHeaders":
			v.additional = splitNonEmpty(val, ";")
		case "Signature":
			v.signature = val
		}
	}
	if credential == "" || v.signature == "" {
		return errInvalidArgument("Authorization", "", "Authorization header is invalid: Credential and Signature are required.")
	}
	if err := v.parseCredential(credential); err != nil {
		return err
	}
	if e := c.useKey(v.accessKeyID); e != nil {
		return e
	}
	t, e := c.v4RequestTime()
	if e != nil {
		return e
	}
	v.datetime = t.UTC().Format(v4DatetimeFormat)
	if e := c.checkSkew(t); e != nil {
		return e
	}
	v.hashPayload = unsignedPayload
	if p := c.r.Header.Get("x-oss-content-sha256"); p != "" {
		v.hashPayload = p
	}
	return c.checkV4(&v)
}

// v4RequestTime is the time a header-signed V4 request was signed at: its x-oss-date
// (ISO 8601, 20221220T084818Z), or without one its Date header (GMT, Tue, 20 Dec 2022 08:48:18
// GMT), which OSS takes in its place; the string to sign carries it in ISO 8601 either way. A
// request with neither, or with either in the other's format, is refused
// (https://www.alibabacloud.com/help/en/oss/support/0002-00000503,
// https://alibabacloud.com/help/en/oss/support/0002-00000502).
func (c *call) v4RequestTime() (time.Time, *ossError) {
	if raw := c.r.Header.Get("x-oss-date"); raw != "" {
		t, err := time.Parse(v4DatetimeFormat, raw)
		if err != nil {
			return time.Time{}, errInvalidArgument("x-oss-date", raw, "x-oss-date must be in the ISO 8601 form %s.", v4DatetimeFormat)
		}
		return t, nil
	}
	raw := c.r.Header.Get("Date")
	if raw == "" {
		return time.Time{}, errInvalidArgument("x-oss-date", "", "The request has neither an x-oss-date nor a Date header.")
	}
	t, err := time.Parse(http.TimeFormat, raw)
	if err != nil {
		return time.Time{}, errInvalidArgument("Date", raw, "Date must be in the GMT form %s.", http.TimeFormat)
	}
	return t, nil
}

// verifyV4Query handles presigned URLs (x-oss-signature-version and friends
// in the query string).
func (c *call) verifyV4Query() *ossError {
	q := c.r.URL.Query()
	if q.Get("x-oss-signature-version") != algorithmV4 {
		return errInvalidArgument("x-oss-signature-version", q.Get("x-oss-signature-version"), "Unsupported signature version.")
	}
	v := v4Request{
		datetime:    q.Get("x-oss-date"),
		signature:   q.Get("x-oss-signature"),
		additional:  splitNonEmpty(q.Get("x-oss-additional-headers"), ";"),
		hashPayload: unsignedPayload,
	}
	if err := v.parseCredential(q.Get("x-oss-credential")); err != nil {
		return err
	}
	if e := c.useKey(v.accessKeyID); e != nil {
		return e
	}
	t, err := time.Parse(v4DatetimeFormat, v.datetime)
	if err != nil {
		return errInvalidArgument("x-oss-date", v.datetime, "x-oss-date is missing or malformed.")
	}
	expires, err := strconv.ParseInt(q.Get("x-oss-expires"), 10, 64)
	if err != nil || expires <= 0 {
		return errInvalidArgument("x-oss-expires", q.Get("x-oss-expires"), "x-oss-expires is missing or malformed.")
	}
	if c.h.now().After(t.Add(time.Duration(expires) * time.Second)) {
		return errAccessDenied("Request has expired.")
	}
	// The client signed the query before appending x-oss-signature.
	var kept []string
	for _, p := range strings.Split(c.r.URL.RawQuery, "&") {
		if k, _, _ := strings.Cut(p, "="); k != "x-oss-signature" && p != "" {
			kept = append(kept, p)
		}
	}
	v.rawQuery = strings.Join(kept, "&")
	return c.checkV4(&v)
}

func (v *v4Request) parseCredential(credential string) *ossError {
	parts := strings.Split(credential, "/")
	if len(parts) != 5 || parts[0] == "" || parts[4] != v4Terminator {
		return errInvalidArgument("Credential", credential,
			"Credential must be AccessKeyId/yyyymmdd/region/oss/%s.", v4Terminator)
	}
	v.accessKeyID, v.date, v.region, v.product = parts[0], parts[1], parts[2], parts[3]
	if v.product != "oss" {
		return errInvalidArgument("Credential", credential, "Credential scope product must be oss, not %q.", v.product)
	}
	return nil
}

// checkV4 recomputes the signature and compares it in constant time.
func (c *call) checkV4(v *v4Request) *ossError {
	if !strings.HasPrefix(v.datetime, v.date) {
		return errInvalidArgument("Credential", v.date, "The credential date %s does not match the request's date %s.", v.date, v.datetime)
	}
	secret := c.caller.Secret
	canonical := c.canonicalRequestV4(v)
	sum := sha256.Sum256([]byte(canonical))
	scope := fmt.Sprintf("%s/%s/%s/%s", v.date, v.region, v.product, v4Terminator)
	stringToSign := algorithmV4 + "\n" + v.datetime + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	want := signV4(secret, v.date, v.region, v.product, stringToSign)
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(v.signature))) {
		return signatureMismatch(v.accessKeyID, v.signature, stringToSign, canonical)
	}
	c.region = v.region
	return nil
}

// canonicalRequestV4 is METHOD \n URI \n query \n headers \n additional \n payload-hash.
func (c *call) canonicalRequestV4(v *v4Request) string {
	// URI: "/" + bucket + "/" + key, escaped like the SDK's escapePath (the
	// SDK signs the bucket and key, not the URL it sends).
	uri := "/"
	if c.bucket != "" {
		uri += c.bucket + "/" + c.key
	}

	// Query: split the raw query (with + read as %20), sort by the encoded
	// key, and write "k" or "k=v". Duplicate keys keep the last value, as the
	// SDK's map does.
	values := map[string]string{}
	var keys []string
	for _, p := range strings.Split(strings.ReplaceAll(v.rawQuery, "+", "%20"), "&") {
		if p == "" {
			continue
		}
		k, val, _ := strings.Cut(p, "=")
		if _, seen := values[k]; !seen {
			keys = append(keys, k)
		}
		values[k] = val
	}
	sort.Strings(keys)
	var query strings.Builder
	for _, k := range keys {
		if query.Len() > 0 {
			query.WriteByte('&')
		}
		query.WriteString(k)
		if values[k] != "" {
			query.WriteString("=" + values[k])
		}
	}

	// Headers: every x-oss-*, content-type and content-md5, plus the
	// additional headers the client listed.
	additional := map[string]bool{}
	for _, k := range v.additional {
		additional[strings.ToLower(k)] = true
	}
	headerValues := map[string][]string{}
	for k, vals := range c.r.Header {
		low := strings.ToLower(k)
		if isDefaultSignedHeaderV4(low) || additional[low] {
			headerValues[low] = append(headerValues[low], vals...)
		}
	}
	if additional["host"] { // net/http moves Host out of the header map
		headerValues["host"] = []string{c.r.Host}
	}
	names := make([]string, 0, len(headerValues))
	for k := range headerValues {
		names = append(names, k)
	}
	sort.Strings(names)
	var headers strings.Builder
	for _, k := range names {
		vals := make([]string, len(headerValues[k]))
		for i, val := range headerValues[k] {
			vals[i] = strings.TrimSpace(val)
		}
		headers.WriteString(k + ":" + strings.Join(vals, ",") + "\n")
	}

	return c.r.Method + "\n" +
		escapeV4Path(uri) + "\n" +
		query.String() + "\n" +
		headers.String() + "\n" +
		strings.Join(v.additional, ";") + "\n" +
		v.hashPayload
}

func isDefaultSignedHeaderV4(low string) bool {
	return strings.HasPrefix(low, "x-oss-") || low == "content-type" || low == "content-md5"
}

// signV4 derives the signing key from "aliyun_v4"+secret through date,
// region, product and the terminator, then signs.
func signV4(secret, date, region, product, stringToSign string) string {
	key := []byte("aliyun_v4" + secret)
	for _, part := range []string{date, region, product, v4Terminator, stringToSign} {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(part))
		key = m.Sum(nil)
	}
	return hex.EncodeToString(key)
}

// escapeV4Path percent-encodes everything except unreserved characters and
// '/', upper-case hex.
func escapeV4Path(p string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if ch == '/' || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
			('A' <= ch && ch <= 'Z') || ('a' <= ch && ch <= 'z') || ('0' <= ch && ch <= '9') {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[ch>>4])
		b.WriteByte(hexDigits[ch&15])
	}
	return b.String()
}

func splitNonEmpty(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
