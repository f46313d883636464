package emulator

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/sts"
)

// The instance metadata service. On ECS a program asks http://100.100.100.200/latest/... and
// the answer is about the instance it runs on
// (https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata). The emulator has
// one listener and cannot tell instances apart by source address, so the asking instance is
// named in the path: MetadataPath/<instance-id>/latest/meta-data/instance-id is what
// http://100.100.100.200/latest/meta-data/instance-id answers on that instance.
//
// Served: meta-data/instance-id, region-id, zone-id, private-ipv4, hostname; user-data; and the
// instance RAM role's keys: meta-data/ram/security-credentials/ lists the role and
// .../security-credentials/<role> answers its temporary keys
// (https://www.alibabacloud.com/help/en/ecs/user-guide/obtain-a-temporary-authorization-token).
// Both modes are served: normal (no token) and security hardening (PUT latest/api/token, then
// the token in a header on every request); an instance that refuses normal mode (RunInstances
// HttpTokens=required) is not modeled.

// MetadataPath is where the emulator serves each instance's metadata service.
const MetadataPath = "/_emulator/metadata"

// The hardened mode's headers and the token's TTL range: "X-aliyun-ecs-metadata-token-ttl-seconds
// ... The value can range from 1 to 21600"
// (https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata).
const (
	metadataTTLHeader   = "X-aliyun-ecs-metadata-token-ttl-seconds"
	metadataTokenHeader = "X-aliyun-ecs-metadata-token"
	maxMetadataTokenTTL = 21600
)

// The vendor does not publish how long an instance role's keys live, only that they are
// "updated periodically". The emulator gives them AssumeRole's default life (3600 s) and hands
// out new ones once fewer than roleKeyRefresh remain, so a program that asks again before its
// keys expire always holds live ones.
const (
	roleKeyLife    = time.Hour
	roleKeyRefresh = 15 * time.Minute
)

// metadataState is what the metadata service keeps besides the state file: the hardened mode's
// tokens (by token: the instance and expiry) and the current role key of each instance. Neither
// is saved: after a restart a program asks for a new token, and gets new keys.
type metadataState struct {
	mu       sync.Mutex
	tokens   map[string]metadataToken
	roleKeys map[string]string // instance id -> AccessKeyId of its current role key
}

type metadataToken struct {
	instance string
	expires  time.Time
}

func (m *metadataState) reset() {
	m.mu.Lock()
	m.tokens, m.roleKeys = nil, nil
	m.mu.Unlock()
}

// serveMetadata answers MetadataPath/<instance-id>/latest/<item>. An id that names no instance
// is 404: no instance asks for it.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, MetadataPath+"/")
	id, item, _ := strings.Cut(rest, "/")
	item, ok := strings.CutPrefix(item, "latest/")
	s.mu.RLock()
	in, found := emuecs.InstanceOf(s.adminCall(s.now()), id)
	s.mu.RUnlock()
	if !ok || !found {
		metadataNotFound(w)
		return
	}
	if item == "api/token" {
		s.issueMetadataToken(w, r, id)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "405 - Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if tok := r.Header.Get(metadataTokenHeader); tok != "" && !s.metadataTokenValid(tok, id) {
		http.Error(w, "401 - Unauthorized", http.StatusUnauthorized)
		return
	}
	if role, ok := roleKeysItem(item); ok {
		s.serveRoleKeys(w, in, role)
		return
	}
	value, ok := metadataItem(in, item)
	if !ok {
		metadataNotFound(w)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(value))
}

// roleKeysItem reads a security-credentials item: the role after it ("" for the list) and whether
// item is one. The Cluster Autoscaler's alicloud provider asks for the keys at
// meta-data/Ram/security-credentials/<role>, capital R
// (https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.36.1/cluster-autoscaler/cloudprovider/alicloud/metadata/metadata.go,
// RAM_SECURITY), and its instance-RAM-role mode works on ECS, so the service answers that spelling
// like the documented lower-case one.
func roleKeysItem(item string) (string, bool) {
	if role, ok := strings.CutPrefix(item, "meta-data/ram/security-credentials/"); ok {
		return role, true
	}
	return strings.CutPrefix(item, "meta-data/Ram/security-credentials/")
}

// metadataItem answers one plain item of the instance; false for an item the emulator does not
// serve, or user data the instance was not given.
func metadataItem(in emuecs.InstanceView, item string) (string, bool) {
	switch item {
	case "meta-data/instance-id":
		return in.ID, true
	case "meta-data/region-id":
		return in.Region, true
	case "meta-data/zone-id":
		return in.Zone, true
	case "meta-data/private-ipv4":
		return in.PrivateIP, true
	case "meta-data/hostname":
		return in.HostName, in.HostName != ""
	case "user-data":
		// RunInstances takes UserData in Base64; the instance reads what was encoded.
		raw, err := base64.StdEncoding.DecodeString(in.UserData)
		return string(raw), err == nil && in.UserData != ""
	}
	return "", false
}

func metadataNotFound(w http.ResponseWriter) { http.Error(w, "404 - Not Found", http.StatusNotFound) }

// issueMetadataToken answers PUT latest/api/token: a token for this instance that lives the
// seconds its TTL header asks, 1 to 21600.
func (s *Server) issueMetadataToken(w http.ResponseWriter, r *http.Request, instance string) {
	if r.Method != http.MethodPut {
		http.Error(w, "405 - Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	ttl, err := strconv.Atoi(r.Header.Get(metadataTTLHeader))
	if err != nil || ttl < 1 || ttl > maxMetadataTokenTTL {
		http.Error(w, "400 - Bad Request: "+metadataTTLHeader+" must be 1 to 21600 seconds", http.StatusBadRequest)
		return
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	now := s.now()
	s.metadata.mu.Lock()
	if s.metadata.tokens == nil {
		s.metadata.tokens = map[string]metadataToken{}
	}
	for k, t := range s.metadata.tokens {
		if now.After(t.expires) {
			delete(s.metadata.tokens, k)
		}
	}
	s.metadata.tokens[tok] = metadataToken{instance: instance, expires: now.Add(time.Duration(ttl) * time.Second)}
	s.metadata.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(tok))
}

// metadataTokenValid: the token was issued to this instance and has not expired. A token is
// "generated and used only within a specific ECS instance and is time-limited"
// (https://www.alibabacloud.com/help/en/ecs/user-guide/access-instance-metadata-using-hardened-only-mode).
func (s *Server) metadataTokenValid(tok, instance string) bool {
	s.metadata.mu.Lock()
	defer s.metadata.mu.Unlock()
	t, ok := s.metadata.tokens[tok]
	return ok && t.instance == instance && !s.now().After(t.expires)
}

// roleCredentials is the JSON of latest/meta-data/ram/security-credentials/<role>, as the
// vendor's page shows it. The SDK's own struct for it (ecsRAMRoleCredentials in
// sdk/auth/credentials/providers) is unexported, so this one carries the same JSON names.
type roleCredentials struct {
	AccessKeyID     string `json:"AccessKeyId"`
	AccessKeySecret string `json:"AccessKeySecret"`
	Expiration      string `json:"Expiration"`
	SecurityToken   string `json:"SecurityToken"`
	LastUpdated     string `json:"LastUpdated"`
	Code            string `json:"Code"`
}

// serveRoleKeys answers the security-credentials items: "" lists the instance's role, a name
// answers its keys. An instance without a role has neither, nor has any instance a role it
// does not carry: 404, as the vendor answers.
func (s *Server) serveRoleKeys(w http.ResponseWriter, in emuecs.InstanceView, role string) {
	if in.RamRole == "" || (role != "" && role != in.RamRole) {
		metadataNotFound(w)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if role == "" {
		_, _ = w.Write([]byte(in.RamRole))
		return
	}
	body, _ := json.Marshal(s.roleKeys(in.ID, in.RamRole))
	_, _ = w.Write(body)
}

// roleKeys answers the instance's current key of its role, issuing a new one through STS when it
// has none or the one it has is near its end. The key is an STS key like AssumeRole's: a session
// of acs:ram::<account>:role/<role> named after the instance, accepted wherever STS keys are.
func (s *Server) roleKeys(instance, role string) roleCredentials {
	arn := sts.AssumedRole{Account: core.AccountID, Role: role}.RoleArn()
	now := s.now()
	s.mu.Lock()
	st := sts.StoreIn(s.db.stores)
	s.metadata.mu.Lock()
	ak := s.metadata.roleKeys[instance]
	cred := st.Creds[ak]
	if cred == nil || cred.Role != arn || time.Unix(cred.Expires, 0).Sub(now) < roleKeyRefresh {
		ak, cred = st.Issue(arn, instance, now, roleKeyLife)
		if s.metadata.roleKeys == nil {
			s.metadata.roleKeys = map[string]string{}
		}
		s.metadata.roleKeys[instance] = ak
	}
	s.metadata.mu.Unlock()
	s.mu.Unlock()
	s.markDirty()
	return roleCredentials{AccessKeyID: ak, AccessKeySecret: cred.Secret, SecurityToken: cred.Token, Code: "Success",
		Expiration:  time.Unix(cred.Expires, 0).UTC().Format(core.TimeFormat),
		LastUpdated: time.Unix(cred.Issued, 0).UTC().Format(core.TimeFormat)}
}
