package emulator

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/sts"
)

// Signatures are checked by core.Authenticator; the Server gives it the keys it knows.

// lookupKey returns the secret for a long-term key or a live STS key.
func (s *Server) lookupKey(ak string) (secret, token string, exp time.Time, ok bool) {
	if ak == s.cfg.AccessKey {
		return s.cfg.SecretKey, "", time.Time{}, true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sts.StoreIn(s.db.stores).Lookup(ak)
}

// ossCredentials is handed to the OSS handler: the same keys the RPC side accepts.
func (s *Server) ossCredentials(ak string) (string, bool) {
	secret, _, exp, ok := s.lookupKey(ak)
	if !ok || (!exp.IsZero() && s.now().After(exp)) {
		return "", false
	}
	return secret, true
}

// authenticateRequest checks whichever signature the request carries (core.Authenticator).
func (s *Server) authenticateRequest(sr core.SignedRequest, p params, now time.Time) (string, *apiError) {
	return s.auth.Authenticate(sr, p, now)
}
