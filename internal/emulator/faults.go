package emulator

import (
	"net/http"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Faults are injected into RPC and OSS calls (never into admin calls); see core.FaultInjector.
type Faults = core.Faults

// SetFaults replaces the injected faults; the zero value clears them.
func (s *Server) SetFaults(f Faults) { s.faults.Set(f) }

func (s *Server) currentFaults() Faults { return s.faults.Current() }

// applyFaults injects a fault into this call when one is due and reports whether the call has
// been answered (or dropped) already.
func (s *Server) applyFaults(w http.ResponseWriter, r *http.Request, action string, xmlBody bool) bool {
	return s.faults.Apply(w, r, xmlBody, func(code string) { s.stats.record(action, code) })
}
