package sts

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// storeName names the STS records among the emulator's stores.
const storeName = "sts"

// Cred is one temporary key handed out by AssumeRole, by its AccessKeyId.
type Cred struct {
	Secret  string `json:"secret"`
	Token   string `json:"token"`
	Expires int64  `json:"expires"` // unix seconds
	Role    string `json:"role"`
}

// Store is the STS records. Its JSON key "sts" is the one the state file had before STS had
// its own package.
type Store struct {
	Creds map[string]*Cred `json:"sts"`
}

// Init makes the map a state file without STS keys left nil.
func (s *Store) Init() {
	if s.Creds == nil {
		s.Creds = map[string]*Cred{}
	}
}

// StoreIn answers the STS store of a Server's stores.
func StoreIn(s *core.Stores) *Store { return core.StoreOf[*Store](s, storeName) }

// Lookup answers the secret and security token of a temporary key and when it expires; ok is
// false for a key AssumeRole never handed out. An expired key is still found: the caller
// answers the vendor's expiry error for it. Caller holds the state lock (read is enough).
func (s *Store) Lookup(ak string) (secret, token string, expires time.Time, ok bool) {
	c, found := s.Creds[ak]
	if !found {
		return "", "", time.Time{}, false
	}
	return c.Secret, c.Token, time.Unix(c.Expires, 0), true
}
