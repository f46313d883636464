package core

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Signature V3 (ACS3-HMAC-SHA256) is what the vendor's newer SDKs send by
// default, for RPC- and ROA-style APIs alike. The request names its action
// and version in headers (x-acs-action, x-acs-version), its parameters go in
// the query string or the body, and the signature covers the method, path,
// query, the signed headers and a SHA-256 of the body:
//
//	CanonicalRequest = METHOD \n CanonicalURI \n CanonicalQueryString \n
//	                   CanonicalHeaders \n SignedHeaders \n HexSHA256(body)
//	StringToSign     = "ACS3-HMAC-SHA256" \n HexSHA256(CanonicalRequest)
//	Signature        = Hex(HMAC-SHA256(secret, StringToSign))
//	Authorization: ACS3-HMAC-SHA256 Credential=AK,SignedHeaders=a;b;c,Signature=hex

const (
	v3Algorithm = "ACS3-HMAC-SHA256"

	// maxV3Body bounds the body read for hashing; form parsing has the same cap.
	maxV3Body = 10 << 20
)

// v3SignedAlways lists the common headers the vendor requires to be signed
// whenever they are present: everything but Authorization itself.
var v3SignedAlways = []string{
	"host", "x-acs-action", "x-acs-version", "x-acs-date",
	"x-acs-signature-nonce", "x-acs-content-sha256", "x-acs-security-token",
}

// V3Request is what the V3 check needs from an HTTP request. It is captured
// before the form is parsed, because parsing consumes the body the signature
// covers.
type V3Request struct {
	method, path, host string
	query              url.Values
	header             http.Header
	body               []byte
}

// IsV3 tells a V3-signed request from a V1 one, whose signature travels as
// parameters. A request with V3 headers but no Authorization is V3 too, so
// it is told what is missing instead of "AccessKeyId".
func IsV3(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Authorization"), "ACS3-") || r.Header.Get("x-acs-signature-nonce") != ""
}

// ReadV3 captures a V3 request and puts its body back for the form parser.
func ReadV3(r *http.Request) (*V3Request, *Error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxV3Body+1))
		if err != nil {
			return nil, Errf(400, "InvalidParameter", "cannot read the request body: %v", err)
		}
		if len(b) > maxV3Body {
			return nil, Errf(400, "InvalidParameter", "the request body is larger than %d bytes", maxV3Body)
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return &V3Request{
		method: r.Method,
		path:   r.URL.EscapedPath(),
		host:   r.Host,
		query:  r.URL.Query(),
		header: r.Header,
		body:   body,
	}, nil
}

// v3Authorization is the parsed Authorization header.
type v3Authorization struct {
	algorithm, accessKey, signature string
	signedHeaders                   []string // lower case, as listed
}

// parseV3Authorization reads
// "ACS3-HMAC-SHA256 Credential=AK,SignedHeaders=a;b,Signature=hex".
func parseV3Authorization(h string) (v3Authorization, bool) {
	var a v3Authorization
	alg, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok {
		return a, false
	}
	a.algorithm = alg
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return a, false
		}
		switch k {
		case "Credential":
			a.accessKey = v
		case "SignedHeaders":
			for _, name := range strings.Split(v, ";") {
				if name != "" {
					a.signedHeaders = append(a.signedHeaders, strings.ToLower(name))
				}
			}
		case "Signature":
			a.signature = v
		}
	}
	return a, a.accessKey != "" && a.signature != "" && len(a.signedHeaders) > 0
}

func errIncompleteV3(format string, args ...any) *Error {
	return Errf(400, "IncompleteSignature", "The request signature does not conform to Aliyun standards: "+format, args...)
}

// authenticateV3 checks a V3 signature and returns the AccessKeyId it was
// made with. The order is the V1 check's: who is calling, the token, the
// clock, the signature, and last the nonce, so a refused request does not
// burn its nonce.
func (a *Authenticator) authenticateV3(r *V3Request, now time.Time) (string, *Error) {
	authz := r.header.Get("Authorization")
	if authz == "" {
		return "", errIncompleteV3("the Authorization header is missing.")
	}
	parsed, ok := parseV3Authorization(authz)
	if !ok {
		return "", errIncompleteV3("the Authorization header must read %q.", v3Algorithm+" Credential=<AccessKeyId>,SignedHeaders=<h1;h2>,Signature=<hex>")
	}
	if parsed.algorithm != v3Algorithm {
		return "", Errf(400, "InvalidParameter", "Signature algorithm %q is not supported; use %s.", parsed.algorithm, v3Algorithm)
	}
	ak := parsed.accessKey
	secret, token, exp, ok := a.Keys(ak)
	if !ok {
		return "", Errf(404, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
	}
	if id := r.header.Get("x-acs-accesskey-id"); id != "" && id != ak {
		return "", errIncompleteV3("x-acs-accesskey-id %q differs from the Credential %q.", id, ak)
	}
	if e := checkSecurityToken(r.header.Get("x-acs-security-token"), token, exp, now); e != nil {
		return "", e
	}
	for _, name := range []string{"x-acs-action", "x-acs-version", "x-acs-date", "x-acs-signature-nonce", "x-acs-content-sha256"} {
		if r.header.Get(name) == "" {
			return "", ErrMissing(name)
		}
	}
	signed := make(map[string]bool, len(parsed.signedHeaders))
	for _, name := range parsed.signedHeaders {
		signed[name] = true
	}
	for _, name := range v3SignedAlways {
		present := name == "host" || r.header.Get(name) != ""
		if present && !signed[name] {
			return "", errIncompleteV3("the header %q is present but not listed in SignedHeaders.", name)
		}
	}
	if e := checkTimestamp(r.header.Get("x-acs-date"), now); e != nil {
		return "", e
	}
	sum := sha256.Sum256(r.body)
	if bodyHash := hex.EncodeToString(sum[:]); !strings.EqualFold(bodyHash, r.header.Get("x-acs-content-sha256")) {
		return "", Errf(400, "SignatureDoesNotMatch", "x-acs-content-sha256 is not the SHA-256 of the body received (%s).", bodyHash)
	}
	canonical := r.canonicalRequest(parsed.signedHeaders)
	sts := v3StringToSign(canonical)
	want := signV3(sts, secret)
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(parsed.signature))) != 1 {
		// The canonical request goes into the message: parsed client writing its
		// own signer needs it to see where the two sides differ.
		return "", Errf(403, "SignatureDoesNotMatch", "Specified signature is not matched with our calculation. server string to sign is:%s canonical request is:%s", sts, canonical)
	}
	if !a.nonces.use(ak+"\x00"+r.header.Get("x-acs-signature-nonce"), now) {
		return "", Errf(400, "SignatureNonceUsed", "Specified signature nonce was used already.")
	}
	return ak, nil
}

// canonicalRequest builds the V3 canonical request over the given signed
// headers (already lower case).
func (r *V3Request) canonicalRequest(signedHeaders []string) string {
	names := append([]string(nil), signedHeaders...)
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(r.method)
	b.WriteByte('\n')
	b.WriteString(canonicalURI(r.path))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.query))
	b.WriteByte('\n')
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(r.headerValue(name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(names, ";"))
	b.WriteByte('\n')
	b.WriteString(strings.ToLower(r.header.Get("x-acs-content-sha256")))
	return b.String()
}

// headerValue is a header's canonical value: trimmed, several values sorted
// and joined by commas. Go moves Host out of the header map, so it is read
// from the request.
func (r *V3Request) headerValue(name string) string {
	if name == "host" {
		return strings.TrimSpace(r.host)
	}
	vals := r.header.Values(name)
	trimmed := make([]string, len(vals))
	for i, v := range vals {
		trimmed[i] = strings.TrimSpace(v)
	}
	sort.Strings(trimmed)
	return strings.Join(trimmed, ",")
}

// canonicalURI is the escaped path with the RFC 3986 fix-ups the vendor asks
// for; an empty path is "/".
func canonicalURI(path string) string {
	if path == "" {
		return "/"
	}
	return rfc3986Fixups.Replace(path)
}

// canonicalQuery sorts the query by name (then value) and percent-encodes
// both the RFC 3986 way: a parameter with no value is written "name=".
func canonicalQuery(q url.Values) string {
	type pair struct{ k, v string }
	var pairs []pair
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, pair{PercentEncode(k), PercentEncode(v)})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// rfc3986Fixups turns Go's form encoding into RFC 3986: space is %20, '*'
// is escaped and '~' is not.
var rfc3986Fixups = strings.NewReplacer("+", "%20", "*", "%2A", "%7E", "~")

func PercentEncode(s string) string { return rfc3986Fixups.Replace(url.QueryEscape(s)) }

func v3StringToSign(canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	return v3Algorithm + "\n" + hex.EncodeToString(sum[:])
}

func signV3(stringToSign, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(stringToSign))
	return hex.EncodeToString(m.Sum(nil))
}

// SignedRequest is what the signature check of one RPC call works from: the
// HTTP method and, for a V3 request, the captured request (nil for V1, whose
// signature travels in the parameters).
type SignedRequest struct {
	Method string
	V3     *V3Request
}

// Authenticate checks whichever signature the request carries and answers the AccessKeyId it
// was made with.
func (a *Authenticator) Authenticate(sr SignedRequest, p Params, now time.Time) (string, *Error) {
	if sr.V3 != nil {
		return a.authenticateV3(sr.V3, now)
	}
	return a.authenticate(sr.Method, p, now)
}
