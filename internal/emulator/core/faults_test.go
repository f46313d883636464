package core

import (
	"net/http"
	"net/http/httptest"
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
