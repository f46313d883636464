package cloud

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials every test client signs with. They are distinctive so a test can prove that none
// of them (but the access key id, which diagnostics may name) leaks into an error text.
const (
	testAccessKeyID   = "LTAItestKeyID"
	testSecret        = "testSecretValue-do-not-print"
	testSecurityToken = "testSTSToken-do-not-print"
	testRegion        = "cn-wulanchabu"
)

// testAPI is one httptest server standing in for every product's endpoint (ECS, VPC, NAS, STS
// over RPC; OSS over REST). Each test gives it an answer function and reads back how many
// requests each action received.
type testAPI struct {
	srv *httptest.Server

	mu   sync.Mutex
	hits map[string]int
}

// answerFunc writes the answer to the hit-th request (1-based) for action. RPC actions are named
// as in their Action parameter ("DescribeVpcs"); OSS requests are named "oss:" + the query's
// sub-resource, or "oss:" + the method ("oss:bucketInfo", "oss:GET").
type answerFunc func(w http.ResponseWriter, r *http.Request, action string, hit int)

func newTestAPI(t *testing.T, answer answerFunc) *testAPI {
	t.Helper()
	api := &testAPI{hits: map[string]int{}}
	api.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action := actionOf(r)
		api.mu.Lock()
		api.hits[action]++
		hit := api.hits[action]
		api.mu.Unlock()
		answer(w, r, action, hit)
	}))
	t.Cleanup(api.srv.Close)
	return api
}

// actionOf names a request the way answerFunc documents.
func actionOf(r *http.Request) string {
	if a := r.URL.Query().Get("Action"); a != "" {
		return a
	}
	for key := range r.URL.Query() {
		return "oss:" + key
	}
	return "oss:" + r.Method
}

// hitsOf is how many requests action received so far.
func (a *testAPI) hitsOf(action string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits[action]
}

// host is the server's host:port, which transport errors must name.
func (a *testAPI) host() string { return a.srv.Listener.Addr().String() }

// client builds a Client the way the provider does (cloud.New), with every product pointed at
// the test server, no rate limit, and STS credentials so a leaked token would show.
func (a *testAPI) client(t *testing.T, maxRetries int) *Client {
	t.Helper()
	c, err := New(context.Background(), Config{
		Region: testRegion,
		Credentials: Credentials{
			AccessKeyID:     testAccessKeyID,
			AccessKeySecret: testSecret,
			SecurityToken:   testSecurityToken,
		},
		Endpoint:   a.srv.URL,
		MaxRetries: maxRetries,
		UserAgent:  "gpucluster-test/0",
	})
	if err != nil {
		t.Fatalf("cloud.New: %v", err)
	}
	return c
}

// fastWaits shrinks the call layer's backoff and the waiters' poll intervals for one test, so
// retry and wait tests run in milliseconds. The transport's own backoff (100 ms minimum) is a
// constant and stays as shipped. Tests that call this must not run in parallel.
func fastWaits(t *testing.T) {
	t.Helper()
	saved := []time.Duration{apiWaitMin, apiWaitMax, pollMin, pollMax, instancePollMin, instancePollMax, deleteRetryMin, deleteRetryMax}
	apiWaitMin, apiWaitMax = time.Millisecond, 5*time.Millisecond
	deleteRetryMin, deleteRetryMax = time.Millisecond, 5*time.Millisecond
	pollMin, pollMax = time.Millisecond, 5*time.Millisecond
	instancePollMin, instancePollMax = time.Millisecond, 5*time.Millisecond
	t.Cleanup(func() {
		apiWaitMin, apiWaitMax, pollMin, pollMax, instancePollMin, instancePollMax, deleteRetryMin, deleteRetryMax =
			saved[0], saved[1], saved[2], saved[3], saved[4], saved[5], saved[6], saved[7]
	})
}

// writeJSON answers 200 with body encoded as JSON (an SDK response struct).
func writeJSON(w http.ResponseWriter, body any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// rpcError is the error body of the RPC APIs (ECS, VPC, NAS, STS).
type rpcError struct {
	RequestId string
	HostId    string
	Code      string
	Message   string
}

// writeRPCError answers with the vendor's RPC error: a non-2xx status and a JSON body.
func writeRPCError(w http.ResponseWriter, r *http.Request, status int, code, message, requestID string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(rpcError{RequestId: requestID, HostId: r.Host, Code: code, Message: message})
}

// ossError is the error body of OSS.
type ossError struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string
	Message   string
	RequestId string
	HostId    string
}

// writeOSSError answers with OSS's XML error and its request id header.
func writeOSSError(w http.ResponseWriter, r *http.Request, status int, code, message, requestID string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-oss-request-id", requestID)
	w.WriteHeader(status)
	body, _ := xml.Marshal(ossError{Code: code, Message: message, RequestId: requestID, HostId: r.Host})
	_, _ = w.Write(body)
}

// writeBucketInfo answers GetBucketInfo with the smallest document the OSS SDK accepts.
func writeBucketInfo(w http.ResponseWriter, bucket string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-oss-request-id", "oss-req-1")
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<BucketInfo><Bucket><Name>` + bucket + `</Name><Location>oss-` + testRegion + `</Location><StorageClass>Standard</StorageClass></Bucket></BucketInfo>`))
}

// dropConnection takes the connection from the server and closes it without a byte of answer:
// what a reset or a load balancer dropping the request looks like to the client.
func dropConnection(t *testing.T, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Error("the test server cannot hijack connections")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// assertNoSecrets fails when text carries the secret, the security token or a signed query.
func assertNoSecrets(t *testing.T, text string) {
	t.Helper()
	for _, leak := range []string{testSecret, testSecurityToken, "Signature=", "SecurityToken=", "SignatureNonce="} {
		if strings.Contains(text, leak) {
			t.Errorf("error text leaks %q: %s", leak, text)
		}
	}
}
