package emulator

import (
	"net/http"
	"strings"
	"sync"
)

// NodesPath is where a node agent answers, per instance, the Kubernetes node it registered or
// why it did not (see internal/emulator/nodeagent).
const NodesPath = "/_emulator/nodes"

// adminPlugins are admin endpoints added from outside the package (HandleAdmin). They are looked
// up only for paths the emulator does not serve itself, so they cost nothing on the RPC path.
type adminPlugins struct {
	mu       sync.RWMutex
	handlers map[string]http.Handler
}

// HandleAdmin serves path (under /_emulator/) with h, for components that run beside the
// emulator, such as the node agent on NodesPath. A later call for the same path replaces h.
func (s *Server) HandleAdmin(path string, h http.Handler) {
	if !strings.HasPrefix(path, "/_emulator/") {
		panic("emulator: admin paths start with /_emulator/: " + path)
	}
	s.plugins.mu.Lock()
	defer s.plugins.mu.Unlock()
	if s.plugins.handlers == nil {
		s.plugins.handlers = map[string]http.Handler{}
	}
	s.plugins.handlers[path] = h
}

// servePlugin answers an admin path added with HandleAdmin; false when none serves it.
func (s *Server) servePlugin(w http.ResponseWriter, r *http.Request) bool {
	s.plugins.mu.RLock()
	h := s.plugins.handlers[r.URL.Path]
	s.plugins.mu.RUnlock()
	if h == nil {
		if r.URL.Path == NodesPath {
			http.Error(w, "no node agent runs beside this emulator: start it with --kubeconfig PATH to register its instances as Kubernetes nodes", http.StatusNotFound)
			return true
		}
		return false
	}
	h.ServeHTTP(w, r)
	return true
}
