package sts

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// storeName names the STS records among the emulator's stores.
const storeName = "sts"

// Cred is one temporary key, by its AccessKeyId: handed out by AssumeRole, or by the instance
// metadata service for an instance's RAM role.
type Cred struct {
	Secret  string `json:"secret"`
	Token   string `json:"token"`
	Expires int64  `json:"expires"` // unix seconds
	Role    string `json:"role"`    // the role's ARN, acs:ram::<account>:role/<name>
	// Session is the RoleSessionName (an instance's id for instance role keys); keys of state
	// files written before GetCallerIdentity have none.
	Session string `json:"session,omitempty"`
	Issued  int64  `json:"issued,omitempty"` // unix seconds
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
// false for a key never handed out. An expired key is still found: the caller answers the
// vendor's expiry error for it. Caller holds the state lock (read is enough).
func (s *Store) Lookup(ak string) (secret, token string, expires time.Time, ok bool) {
	c, found := s.Creds[ak]
	if !found {
		return "", "", time.Time{}, false
	}
	return c.Secret, c.Token, time.Unix(c.Expires, 0), true
}

// Issue hands out a new temporary key for role (its ARN) and session, valid for d from now,
// and forgets the keys that expired before now. Caller holds the state write lock.
func (s *Store) Issue(role, session string, now time.Time, d time.Duration) (ak string, c *Cred) {
	for k, cr := range s.Creds {
		if cr.Expires < now.Unix() {
			delete(s.Creds, k)
		}
	}
	ak = "STS." + randomToken(18)
	c = &Cred{Secret: randomToken(30), Token: "CAIS" + randomToken(96), Expires: now.Add(d).Unix(),
		Role: role, Session: session, Issued: now.Unix()}
	s.Creds[ak] = c
	return ak, c
}

// Holder answers who holds a temporary key: the role it assumed and the session; ok is false
// for a key STS never handed out (a long-term key). Caller holds the state lock.
func (s *Store) Holder(ak string) (AssumedRole, bool) {
	c, found := s.Creds[ak]
	if !found {
		return AssumedRole{}, false
	}
	acct, name, _ := ParseRoleArn(c.Role)
	return AssumedRole{Account: acct, Role: name, Session: c.Session}, true
}
