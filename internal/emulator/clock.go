package emulator

import (
	"encoding/json"
	"net/http"
	"time"
)

// ClockPath moves the emulator's clock: GET answers {"time"}; POST {"advance": "25h"} moves it
// forward by a Go duration. Everything that keeps time in the emulator reads the same clock
// (Server.now): STS credentials and metadata tokens expire by it, and the node agent judges
// bootstrap tokens and kubeadm's uploaded certificates by it (View.Now), so a test can ask what a
// node that boots a day after its cluster meets without waiting a day. The clock only moves
// forward: nothing in a cloud goes back in time.
const ClockPath = "/_emulator/clock"

// Advance moves the emulator's clock forward by d (d > 0).
func (s *Server) Advance(d time.Duration) {
	if d > 0 {
		s.clockSkew.Add(int64(d))
	}
}

func (s *Server) serveClock(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		var body struct {
			Advance string `json:"advance"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
			return
		}
		d, err := time.ParseDuration(body.Advance)
		if err != nil || d <= 0 {
			http.Error(w, `advance must be a positive Go duration such as "25h"`, http.StatusBadRequest)
			return
		}
		s.Advance(d)
	default:
		http.Error(w, "use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"time": s.now().UTC().Format(time.RFC3339)})
}
