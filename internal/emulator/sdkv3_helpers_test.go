package emulator

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	openapi "github.com/alibabacloud-go/darabonba-openapi/v2/client"
	openapiutil "github.com/alibabacloud-go/darabonba-openapi/v2/utils"
	ecs7 "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"
	"github.com/alibabacloud-go/tea/tea"
	vpc6 "github.com/alibabacloud-go/vpc-20160428/v6/client"
)

// v3Env serves one emulator over HTTPS, the newer SDKs' default protocol, and
// records every request it receives so tests can replay or alter what the
// SDK really sent.
type v3Env struct {
	*env
	tls      *httptest.Server
	ca       string // the test server's certificate, PEM, for the SDK's trust store
	endpoint string

	mu   sync.Mutex
	seen []recordedRequest
}

// recordedRequest is one request as it arrived on the wire.
type recordedRequest struct {
	method, url string
	header      http.Header
	body        []byte
}

func newV3Env(t testing.TB, cfg Config) *v3Env {
	t.Helper()
	v := &v3Env{env: newEnv(t, cfg)}
	h := v.s.Handler()
	v.tls = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading a request body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		v.mu.Lock()
		v.seen = append(v.seen, recordedRequest{method: r.Method, url: r.URL.String(), header: r.Header.Clone(), body: body})
		v.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(v.tls.Close)
	v.ca = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: v.tls.Certificate().Raw}))
	v.endpoint = strings.TrimPrefix(v.tls.URL, "https://")
	return v
}

// config is the newer SDKs' default client configuration: only the
// credentials, the region, where the emulator listens and the CA that signed
// its certificate are set. Signature (V3), protocol (HTTPS) and method come
// from the SDK.
func (v *v3Env) config(ak, secret, token string) *openapi.Config {
	c := &openapi.Config{
		AccessKeyId:     dara.String(ak),
		AccessKeySecret: dara.String(secret),
		RegionId:        dara.String(testRegion),
		Endpoint:        dara.String(v.endpoint),
		Ca:              dara.String(v.ca),
	}
	if token != "" {
		c.SecurityToken = dara.String(token)
	}
	return c
}

// newV3Client builds one of the newer SDK's clients on the default configuration.
func newV3Client[C any](v *v3Env, newClient func(*openapi.Config) (C, error), ak, secret, token string) C {
	v.t.Helper()
	c, err := newClient(v.config(ak, secret, token))
	must(v.t, err)
	return c
}

func (v *v3Env) newECS(ak, secret, token string) *ecs7.Client {
	return newV3Client(v, ecs7.NewClient, ak, secret, token)
}

func (v *v3Env) newVPC(ak, secret, token string) *vpc6.Client {
	return newV3Client(v, vpc6.NewClient, ak, secret, token)
}

// newOpenAPI builds the generic client every generated product client wraps. The products whose
// generated client the Go module proxy does not serve (NAS, STS, SLB, ESS) are called through it
// with the parameters their generated clients pass (rpcV3, rpcV1).
func (v *v3Env) newOpenAPI(ak, secret, token string) *openapi.Client {
	return newV3Client(v, openapi.NewClient, ak, secret, token)
}

// rpcV3 calls an action the way the newer generated clients do (ecs-20140526/v7's
// DescribeZonesWithOptions, for one): CallApi with an RPC-style HTTPS POST, V3-signed, the
// parameters in the query string (inBody: as a form body, the other place RPC-style callers put
// them).
func rpcV3(c *openapi.Client, version, action string, args map[string]any, inBody bool) (map[string]any, error) {
	req := &openapi.OpenApiRequest{}
	if inBody {
		req.Body = args
	} else {
		req.Query = openapiutil.Query(args)
	}
	return c.CallApi(&openapi.Params{
		Action:      dara.String(action),
		Version:     dara.String(version),
		Protocol:    dara.String("HTTPS"),
		Pathname:    dara.String("/"),
		Method:      dara.String("POST"),
		AuthType:    dara.String("AK"),
		Style:       dara.String("RPC"),
		ReqBodyType: dara.String("formData"),
		BodyType:    dara.String("json"),
	}, req, &dara.RuntimeOptions{})
}

// nasCall is rpcV3 for NAS.
func nasCall(c *openapi.Client, action string, args map[string]any, inBody bool) (map[string]any, error) {
	return rpcV3(c, versionNAS, action, args, inBody)
}

// rpcV1 calls an action the way the older generated clients do (github.com/alibabacloud-go/
// ess-20140828's client.go: DoRPCRequest(action, "2014-08-28", "HTTPS", "POST", "AK", "json")
// with the request model as the form body): HMAC-SHA1 signature version 1.0 in the query string.
func rpcV1(c *openapi.Client, version, action string, args map[string]any) (map[string]any, error) {
	return c.DoRPCRequest(dara.String(action), dara.String(version), dara.String("HTTPS"), dara.String("POST"),
		dara.String("AK"), dara.String("json"), &openapi.OpenApiRequest{Body: args}, &dara.RuntimeOptions{})
}

// last returns the last request the emulator received.
func (v *v3Env) last() recordedRequest {
	v.t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.seen) == 0 {
		v.t.Fatal("no request recorded")
	}
	r := v.seen[len(v.seen)-1]
	r.header = r.header.Clone()
	r.body = append([]byte(nil), r.body...)
	return r
}

// send sends a recorded (possibly altered) request again and returns the
// vendor error code of the answer ("" for a 2xx answer).
func (v *v3Env) send(r recordedRequest) (code string, status int) {
	v.t.Helper()
	req, err := http.NewRequest(r.method, v.tls.URL+r.url, bytes.NewReader(r.body))
	must(v.t, err)
	req.Header = r.header.Clone()
	resp, err := v.tls.Client().Do(req)
	must(v.t, err)
	defer resp.Body.Close()
	if resp.StatusCode < 300 {
		return "", resp.StatusCode
	}
	var eb errorBody
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &eb); err != nil {
		v.t.Fatalf("error answer is not the vendor's JSON: %s", b)
	}
	return eb.Code, resp.StatusCode
}

// v3Code returns the vendor error code the newer SDK reports ("" for nil).
func v3Code(err error) string {
	if err == nil {
		return ""
	}
	var se *tea.SDKError
	if errors.As(err, &se) {
		return tea.StringValue(se.Code)
	}
	return "not an SDK error: " + err.Error()
}

func wantV3Code(t testing.TB, err error, code string) {
	t.Helper()
	if got := v3Code(err); got != code {
		t.Fatalf("want error code %s, got %q (%v)", code, got, err)
	}
}
