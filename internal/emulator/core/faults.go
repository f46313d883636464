package core

import (
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Faults are injected into RPC and OSS calls (never into admin calls).
// Rates are fractions of calls in [0,1].
type Faults struct {
	ThrottleRate    float64 `json:"throttle_rate"`    // answered 400 Throttling.User
	UnavailableRate float64 `json:"unavailable_rate"` // answered 503 ServiceUnavailable
	ResetRate       float64 `json:"reset_rate"`       // connection dropped without an answer
	LatencyMS       int     `json:"latency_ms"`       // added to every call
}

// FaultInjector spreads faults over calls instead of drawing them at random: each call adds a
// kind's rate to its credit, and the kind fires when the credit reaches one. The fractions are
// then exact over any run of calls (a 2% reset rate drops every 50th call), so a test that needs
// every kind to happen at least once is deterministic, while a client still cannot predict which
// of its calls will fail.
type FaultInjector struct {
	mu                           sync.Mutex
	f                            Faults
	reset, throttle, unavailable float64
}

// Fault kinds pick returns.
const (
	faultNone = iota
	faultReset
	faultThrottle
	faultUnavailable
)

// Set replaces the injected faults; the zero value clears them.
func (fi *FaultInjector) Set(f Faults) {
	fi.mu.Lock()
	fi.f = f
	// Start half-way, so each kind first fires after half its period rather than at once.
	fi.reset, fi.throttle, fi.unavailable = 0.5, 0.5, 0.5
	fi.mu.Unlock()
}

// Current answers the faults being injected.
func (fi *FaultInjector) Current() Faults {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	return fi.f
}

// pick decides the fault of one call. At most one kind fires per call; one that is due but loses
// to another keeps its credit and fires on the next call.
func (fi *FaultInjector) pick() int {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.reset += fi.f.ResetRate
	fi.throttle += fi.f.ThrottleRate
	fi.unavailable += fi.f.UnavailableRate
	switch {
	case fi.reset >= 1:
		fi.reset--
		return faultReset
	case fi.unavailable >= 1:
		fi.unavailable--
		return faultUnavailable
	case fi.throttle >= 1:
		fi.throttle--
		return faultThrottle
	}
	return faultNone
}

// Apply injects a fault into this call when one is due and reports whether the call has been
// answered (or dropped) already; record counts the fault under its code.
func (fi *FaultInjector) Apply(w http.ResponseWriter, r *http.Request, xmlBody bool, record func(code string)) bool {
	f := fi.Current()
	if f.LatencyMS > 0 {
		select {
		case <-time.After(time.Duration(f.LatencyMS) * time.Millisecond):
		case <-r.Context().Done():
		}
	}
	if f.ThrottleRate <= 0 && f.UnavailableRate <= 0 && f.ResetRate <= 0 {
		return false
	}
	switch fi.pick() {
	case faultReset:
		record("ConnectionReset")
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		// No hijacking (HTTP/2): abort the handler, which resets the stream.
		panic(http.ErrAbortHandler)
	case faultThrottle:
		record("Throttling.User")
		writeFault(w, r, Errf(400, "Throttling.User", "Request was denied due to user flow control."), xmlBody)
		return true
	case faultUnavailable:
		record("ServiceUnavailable")
		writeFault(w, r, Errf(503, "ServiceUnavailable", "The request has failed due to a temporary failure of the server."), xmlBody)
		return true
	}
	return false
}

func writeFault(w http.ResponseWriter, r *http.Request, e *Error, xmlBody bool) {
	id := NewRequestID()
	if !xmlBody {
		WriteError(w, e, id, r.Host)
		return
	}
	// OSS speaks XML errors.
	body := `<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>" + e.Code + "</Code><Message>" + e.Message +
		"</Message><RequestId>" + id + "</RequestId><HostId>" + r.Host + "</HostId></Error>"
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-oss-request-id", id)
	// A HEAD response has no body: OSS sends the error document base64-encoded in the x-oss-err
	// header instead, which is where the OSS SDK reads it from (tryConvertServiceError in
	// github.com/aliyun/alibabacloud-oss-go-sdk-v2 oss/client.go, HeaderOssERR), as the
	// emulator's own OSS errors do (oss.call.writeError).
	if r.Method == http.MethodHead {
		w.Header().Set("x-oss-err", base64.StdEncoding.EncodeToString([]byte(body)))
		w.WriteHeader(e.Status)
		return
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(body))
}
