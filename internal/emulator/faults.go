package emulator

import (
	"math/rand/v2"
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

type faultInjector struct {
	mu sync.Mutex
	f  Faults
}

// SetFaults replaces the injected faults; the zero value clears them.
func (s *Server) SetFaults(f Faults) {
	s.faults.mu.Lock()
	s.faults.f = f
	s.faults.mu.Unlock()
}

func (s *Server) currentFaults() Faults {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.f
}

// applyFaults injects a fault into this call if the dice say so and reports
// whether the call has been answered (or dropped) already.
func (s *Server) applyFaults(w http.ResponseWriter, r *http.Request, action string, xmlBody bool) bool {
	f := s.currentFaults()
	if f.LatencyMS > 0 {
		select {
		case <-time.After(time.Duration(f.LatencyMS) * time.Millisecond):
		case <-r.Context().Done():
		}
	}
	if f.ThrottleRate <= 0 && f.UnavailableRate <= 0 && f.ResetRate <= 0 {
		return false
	}
	x := rand.Float64()
	switch {
	case x < f.ResetRate:
		s.stats.record(action, "ConnectionReset")
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		// No hijacking (HTTP/2): abort the handler, which resets the stream.
		panic(http.ErrAbortHandler)
	case x < f.ResetRate+f.ThrottleRate:
		s.stats.record(action, "Throttling.User")
		writeFault(w, errf(400, "Throttling.User", "Request was denied due to user flow control."), xmlBody, r.Host)
		return true
	case x < f.ResetRate+f.ThrottleRate+f.UnavailableRate:
		s.stats.record(action, "ServiceUnavailable")
		writeFault(w, errf(503, "ServiceUnavailable", "The request has failed due to a temporary failure of the server."), xmlBody, r.Host)
		return true
	}
	return false
}

func writeFault(w http.ResponseWriter, e *apiError, xmlBody bool, host string) {
	id := newRequestID()
	if !xmlBody {
		writeAPIError(w, e, id, host)
		return
	}
	// OSS speaks XML errors.
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-oss-request-id", id)
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>" + e.Code + "</Code><Message>" + e.Message +
		"</Message><RequestId>" + id + "</RequestId><HostId>" + host + "</HostId></Error>"))
}
