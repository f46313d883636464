package quotas

import (
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// storeName names the Quota Center records among the emulator's stores.
const storeName = "quota_center"

// Store holds the quotas PUT /_emulator/quota_center set, by quota code; a code not set answers
// the vendor's default. They are saved with the state; a reset forgets them.
type Store struct {
	Set map[string]int `json:"quota_center,omitempty"`
}

// Init makes the map a state file without Quota Center quotas left nil.
func (s *Store) Init() {
	if s.Set == nil {
		s.Set = map[string]int{}
	}
}

// StoreIn answers the Quota Center store of a Server's stores.
func StoreIn(s *core.Stores) *Store { return core.StoreOf[*Store](s, storeName) }

func (s *Store) total(q quota) int {
	if v, ok := s.Set[q.code]; ok {
		return v
	}
	return q.def
}

// Effective answers every served quota's TotalQuota, set or default, by code, and the ecs-spec
// quotas set, by "<instance type>@<zone>".
func (s *Store) Effective() map[string]int {
	out := map[string]int{}
	for _, q := range served {
		out[q.code] = s.total(q)
	}
	for k, v := range s.Set {
		if _, _, ok := specKey(k); ok {
			out[k] = v
		}
	}
	return out
}

// SetQuotas replaces the quotas set; an empty table restores the defaults. Unknown codes and
// negative quotas are refused, naming the codes served.
func (s *Store) SetQuotas(t map[string]int) error {
	known := map[string]bool{}
	for _, c := range Codes() {
		known[c] = true
	}
	for code, v := range t {
		if _, _, spec := specKey(code); !known[code] && !spec {
			return fmt.Errorf("quota code %q is not served; served codes: %v, and ecs-spec GPU quotas as \"<GPU instance type>@<zone>\"", code, Codes())
		}
		if v < 0 {
			return fmt.Errorf("quota %s is %d; quotas are 0 or more", code, v)
		}
	}
	s.Set = map[string]int{}
	for k, v := range t {
		s.Set[k] = v
	}
	return nil
}
