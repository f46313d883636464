package emulator

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
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

// ossCredentials is handed to the OSS handler: the same keys the RPC side accepts, with what a
// bucket policy names an STS key's holder by. OSS checks the token and expiry itself.
func (s *Server) ossCredentials(ak string) (oss.Key, bool) {
	secret, token, exp, ok := s.lookupKey(ak)
	if !ok {
		return oss.Key{}, false
	}
	k := oss.Key{Secret: secret, Token: token, Expires: exp}
	if token != "" {
		s.mu.RLock()
		holder, _ := sts.StoreIn(s.db.stores).Holder(ak)
		s.mu.RUnlock()
		k.Principal = holder.PolicyPrincipal()
	}
	return k, true
}

// authenticateRequest checks whichever signature the request carries (core.Authenticator).
func (s *Server) authenticateRequest(sr core.SignedRequest, p params, now time.Time) (string, *apiError) {
	return s.auth.Authenticate(sr, p, now)
}
