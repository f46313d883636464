package core

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Fault rates are exact over any run of calls: a 25% throttle rate throttles every 4th call.
func TestFaultRatesAreExact(t *testing.T) {
	var fi FaultInjector
	fi.Set(Faults{ThrottleRate: 0.25})
	var codes []string
	for range 8 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if fi.Apply(w, r, false, func(code string) { codes = append(codes, code) }) && w.Code != 400 {
			t.Fatalf("a throttled call answered %d", w.Code)
		}
	}
	if len(codes) != 2 || codes[0] != "Throttling.User" {
		t.Fatalf("8 calls at 25%% were faulted %v, want 2 throttles", codes)
	}
	fi.Set(Faults{})
	if fi.Apply(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil), false, nil) {
		t.Fatal("a call was faulted with the faults cleared")
	}
}

// An OSS HEAD call's injected fault carries its error document in the x-oss-err header, as OSS
// answers a HEAD, so the SDK reads its code (and a client retries it) rather than failing on an
// empty body; other methods keep the document in the body.
func TestOSSHeadFaultInHeader(t *testing.T) {
	var fi FaultInjector
	fi.Set(Faults{UnavailableRate: 1})
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		w := httptest.NewRecorder()
		if !fi.Apply(w, httptest.NewRequest(method, "http://bucket.oss/key", nil), true, func(string) {}) {
			t.Fatalf("%s: no fault injected at rate 1", method)
		}
		hdr, _ := base64.StdEncoding.DecodeString(w.Header().Get("x-oss-err"))
		inHeader, inBody := strings.Contains(string(hdr), "<Code>ServiceUnavailable</Code>"), strings.Contains(w.Body.String(), "<Code>ServiceUnavailable</Code>")
		if w.Code != 503 || inHeader != (method == http.MethodHead) || inBody == (method == http.MethodHead) {
			t.Errorf("%s: status %d, x-oss-err %q, body %q", method, w.Code, hdr, w.Body.String())
		}
	}
}
