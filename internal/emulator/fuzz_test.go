package emulator

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// Fuzz targets for the emulator's front door: the raw HTTP parsing of RPC and OSS requests and
// the RPC signature check. Seeds live in testdata/fuzz/<Target>/ and run with `go test`.

// fuzzServer is one emulator shared by every input of a fuzz run (New starts goroutines, so one
// per input would be slow and would leak them until Close).
var fuzzServer = sync.OnceValue(func() *Server {
	s, err := New(Config{AccessKey: "emulator", SecretKey: "emulator-secret"})
	if err != nil {
		panic(err)
	}
	return s
})

// serve answers one request through the emulator's handler, in process.
func serve(s *Server, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

// nothingLives fails when an input changed the emulator's state.
func nothingLives(t *testing.T, s *Server, input any) {
	t.Helper()
	r := s.Resources()
	for name, l := range map[string][]map[string]any{
		"instances": r.Instances, "vpcs": r.Vpcs, "vswitches": r.VSwitches, "security_groups": r.SecurityGroups,
		"deployment_sets": r.DeploymentSets, "hpc_clusters": r.HpcClusters, "file_systems": r.FileSystems, "buckets": r.Buckets,
	} {
		if len(l) != 0 {
			t.Fatalf("an unauthenticated request created %s: %v\ninput: %q", name, l, input)
		}
	}
}

// FuzzServeHTTP sends raw HTTP requests (request line, headers, body) to the emulator: RPC calls
// by query, form or x-acs-* headers, OSS calls with v1, v4 and presigned signatures. Nothing may
// panic; every error is answered with a status and a body; and since no input can carry a valid
// signature, none may create anything.
func FuzzServeHTTP(f *testing.F) {
	for _, raw := range []string{
		"GET /?Action=DescribeRegions&Version=2014-05-26&AccessKeyId=emulator&Signature=x HTTP/1.1\r\nHost: ecs.aliyuncs.com\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: vpc.aliyuncs.com\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 63\r\n\r\nAction=CreateVpc&Version=2016-04-28&RegionId=cn-wulanchabu&A=1",
		"POST /?Tag.1.Key=a&Tag.0.Value=b&Tag.x.Key=&InstanceIds=[1 HTTP/1.1\r\nHost: x\r\nx-acs-action: RunInstances\r\nx-acs-version: 2014-05-26\r\n\r\n",
		"GET /?Action=DescribeRegions&Version=2014-05-26&AccessKeyId=emulator&Signature=x&Timestamp=2024-13-01T00:00:00Z&SignatureMethod=HMAC-SHA1 HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /bucket HTTP/1.1\r\nHost: oss-cn-wulanchabu.aliyuncs.com\r\nAuthorization: OSS emulator:c2lnbmF0dXJl\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n",
		"PUT / HTTP/1.1\r\nHost: bucket.oss-cn-wulanchabu.aliyuncs.com\r\nAuthorization: OSS4-HMAC-SHA256 Credential=emulator/20240101/cn-wulanchabu/oss/aliyun_v4_request,AdditionalHeaders=host,Signature=00\r\nx-oss-date: 20240101T000000Z\r\nx-oss-content-sha256: UNSIGNED-PAYLOAD\r\n\r\n",
		"GET /bucket/key?OSSAccessKeyId=emulator&Expires=1&Signature=abc HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /bucket/key?x-oss-signature-version=OSS4-HMAC-SHA256&x-oss-credential=emulator%2F2024&x-oss-date=x&x-oss-expires=-1&x-oss-signature=00 HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /bucket/obj?versionId=&uploads&max-keys=-5 HTTP/1.1\r\nHost: h\r\nContent-MD5: ###\r\nContent-Length: 3\r\n\r\nabc",
		"GET /?list-type=2&max-keys=99999999999999999999 HTTP/1.1\r\nHost: b.h\r\n\r\n",
		"DELETE /b/%zz HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /?RegionId=cn-wulanchabu&VpcName=a%20b HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ACS3-HMAC-SHA256 Credential=emulator,SignedHeaders=host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version,Signature=00\r\nx-acs-action: CreateVpc\r\nx-acs-version: 2016-04-28\r\nx-acs-date: 2024-01-01T00:00:00Z\r\nx-acs-signature-nonce: n1\r\nx-acs-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\r\n\r\n",
		"PUT /a/b%2Fc HTTP/1.1\r\nHost: h\r\nAuthorization: ACS3-HMAC-SHA256 Credential=,SignedHeaders=;;,Signature\r\nx-acs-signature-nonce: n\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 9\r\n\r\nAction=Ru",
	} {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil || strings.HasPrefix(r.URL.Path, "/_emulator") {
			return // not HTTP, or the admin API (which is unauthenticated by design)
		}
		r.RemoteAddr = "192.0.2.1:1234"
		s := fuzzServer()
		w := serve(s, r)
		if w.Code < 100 || w.Code > 599 {
			t.Fatalf("status %d for %q", w.Code, raw)
		}
		if w.Code >= 400 && w.Body.Len() == 0 && r.Method != http.MethodHead {
			t.Fatalf("error %d without a body for %q", w.Code, raw)
		}
		nothingLives(t, s, raw)
	})
}

// reservedRPC are the parameters the SDK's signer sets itself.
var reservedRPC = map[string]bool{
	"Action": true, "Version": true, "RegionId": true, "Format": true, "Timestamp": true, "Signature": true,
	"SignatureMethod": true, "SignatureVersion": true, "SignatureType": true, "SignatureNonce": true,
	"AccessKeyId": true, "SecurityToken": true, "BearerToken": true,
}

// signedDescribeRegions builds DescribeRegions with one extra parameter (in the query or the
// form body) signed by the vendor SDK's own signer with secret.
func signedDescribeRegions(t *testing.T, key, value string, inForm bool, secret string) *http.Request {
	t.Helper()
	req := ecs.CreateDescribeRegionsRequest()
	req.Scheme, req.Domain = "http", "ecs.aliyuncs.com"
	if inForm {
		req.FormParams[key] = value
	} else {
		req.QueryParams[key] = value
	}
	cred, err := credentials.NewStaticAKCredentialsProviderBuilder().WithAccessKeyId("emulator").WithAccessKeySecret(secret).Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.Sign(req, nil, "cn-wulanchabu", cred); err != nil {
		t.Fatalf("signing: %v", err)
	}
	hr, err := http.NewRequest(req.GetMethod(), req.BuildUrl(), req.GetBodyReader())
	if err != nil {
		t.Fatalf("building the request: %v", err)
	}
	for k, v := range req.GetHeaders() {
		hr.Header.Set(k, v)
	}
	return hr
}

// FuzzSignedRPC signs DescribeRegions with one arbitrary extra parameter exactly as the vendor
// SDK does. The emulator must accept what the SDK signs with the right secret, whatever the
// parameter's bytes (the string to sign has to match the SDK's encoding byte for byte), and
// refuse the same request signed with any other secret as SignatureDoesNotMatch.
func FuzzSignedRPC(f *testing.F) {
	f.Add("PageSize", "10", false, "wrong")
	f.Add("Tag.1.Key", "a b+c*d~e", true, "")
	f.Add("Name", "中文/%7E;&=?#", false, "emulator-secret ")
	f.Add("Key With Space", "\x00\xff", true, "x")
	f.Add("A*~", "", false, "emulator-secreT")
	f.Add("", "value-without-key", false, "z")
	f.Fuzz(func(t *testing.T, key, value string, inForm bool, wrongSecret string) {
		if reservedRPC[key] {
			return // the signer owns these names
		}
		s := fuzzServer()
		w := serve(s, signedDescribeRegions(t, key, value, inForm, "emulator-secret"))
		if w.Code != http.StatusOK {
			t.Fatalf("the emulator refused a request the SDK signed with the right secret (%s=%q, form %v): %d %s",
				key, value, inForm, w.Code, w.Body.String())
		}
		var ok ecs.DescribeRegionsResponse
		if err := json.Unmarshal(w.Body.Bytes(), &ok); err != nil || len(ok.Regions.Region) == 0 {
			t.Fatalf("DescribeRegions answered %q (%v)", w.Body.String(), err)
		}
		if wrongSecret == "emulator-secret" || wrongSecret == "" {
			return // the right one, or one the SDK refuses to sign with
		}
		w = serve(s, signedDescribeRegions(t, key, value, inForm, wrongSecret))
		body, _ := io.ReadAll(w.Body)
		if w.Code != http.StatusForbidden || !strings.Contains(string(body), "SignatureDoesNotMatch") {
			t.Fatalf("a request signed with secret %q was answered %d %s", wrongSecret, w.Code, body)
		}
		if strings.Contains(string(body), "emulator-secret") {
			t.Fatalf("the error answer carries the secret: %s", body)
		}
	})
}

// FuzzParams drives the RPC parameter readers (indexed lists, tags, JSON id lists, integers and
// booleans) with one arbitrary name and value next to well-formed ones. None may panic, and
// what they return must be consistent with what was sent.
func FuzzParams(f *testing.F) {
	f.Add("Tag.1.Key", "a")
	f.Add("Tag.0.Key", "a")
	f.Add("Tag.-1.Value", "v")
	f.Add("Tag.99999999999999999999.Key", "a")
	f.Add("Tag.2.Value", "orphan")
	f.Add("InstanceIds", `["i-1",2]`)
	f.Add("InstanceIds", `[`)
	f.Add("InstanceId.1", "i-x")
	f.Add("Amount", "1e3")
	f.Add("DryRun", "maybe")
	f.Fuzz(func(t *testing.T, key, value string) {
		p := params{"Tag.3.Key": "k3", "Tag.3.Value": "v3", key: value}
		tags, aerr := p.Tags("Tag")
		if aerr == nil {
			if len(tags) > 20 {
				t.Fatalf("tagsParam accepted %d tags", len(tags))
			}
			found := false
			for _, tg := range tags {
				if tg.K == "" {
					t.Fatalf("tagsParam returned a tag without a key: %+v (%s=%q)", tags, key, value)
				}
				found = found || (tg.K == "k3" && (tg.V == "v3" || key == "Tag.3.Value"))
			}
			if !found && key != "Tag.3.Key" {
				t.Fatalf("tagsParam lost Tag.3 when %s=%q was added: %+v", key, value, tags)
			}
		} else if aerr.Status != http.StatusBadRequest {
			t.Fatalf("tagsParam: %d %s", aerr.Status, aerr.Code)
		}
		for n := range p.Indexed("Tag") {
			if n < 1 {
				t.Fatalf("indexed returned index %d", n)
			}
		}
		_ = p.List("InstanceId")
		ids, aerr := p.IDs("InstanceIds", "InstanceId")
		if aerr == nil && key == "InstanceIds" && value != "" {
			var want []string
			if err := json.Unmarshal([]byte(value), &want); err != nil || len(want) != len(ids) {
				t.Fatalf("idsParam accepted InstanceIds=%q as %q", value, ids)
			}
		}
		for _, k := range []string{key, "Missing"} {
			if _, aerr := p.Int(k, 7); aerr != nil && aerr.Code != "InvalidParameter" {
				t.Fatalf("intv(%q): %s", k, aerr.Code)
			}
			if _, aerr := p.Bool(k, true); aerr != nil && aerr.Code != "InvalidParameter" {
				t.Fatalf("boolv(%q): %s", k, aerr.Code)
			}
		}
		_ = paramsHash(p)
	})
}
