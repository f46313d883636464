package emulator

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// metadataGet asks instance's metadata service for item (what follows latest/), with the
// hardened mode's token when token is not "": the status and the body.
func (e *env) metadataGet(instance, item, token string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+MetadataPath+"/"+instance+"/latest/"+item, nil)
	must(e.t, err)
	if token != "" {
		req.Header.Set(metadataTokenHeader, token)
	}
	return e.metadataDo(req)
}

func (e *env) metadataDo(req *http.Request) (int, string) {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	must(e.t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return resp.StatusCode, string(body)
}

// metadataToken asks for a hardened-mode token with the TTL header value ttl.
func (e *env) metadataToken(instance, ttl string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPut, e.srv.URL+MetadataPath+"/"+instance+"/latest/api/token", nil)
	must(e.t, err)
	if ttl != "" {
		req.Header.Set(metadataTTLHeader, ttl)
	}
	return e.metadataDo(req)
}

// newRoleEnv is an emulator with two instances: one carrying the RAM role gpucluster-node, one
// without a role.
func newRoleEnv(t *testing.T) (e *env, node, bare string) {
	t.Helper()
	e = newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	return e, e.runWithRole(f, "gpucluster-node", 1)[0], e.runWithRole(f, "", 1)[0]
}

// roleKeysOf fetches and decodes an instance's role keys.
func (e *env) roleKeysOf(instance, role string) roleCredentials {
	e.t.Helper()
	status, body := e.metadataGet(instance, "meta-data/ram/security-credentials/"+role, "")
	if status != http.StatusOK {
		e.t.Fatalf("role keys of %s: %d %s", instance, status, body)
	}
	var c roleCredentials
	must(e.t, json.Unmarshal([]byte(body), &c))
	return c
}

// The plain items answer what the instance is; user data comes back as it was before Base64.
func TestMetadataItems(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1)
	r.UserData = base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho hello\n"))
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	id := resp.InstanceIdSets.InstanceIdSet[0]
	in := e.describe([]string{id})[0]
	for item, want := range map[string]string{
		"meta-data/instance-id":  id,
		"meta-data/region-id":    testRegion,
		"meta-data/zone-id":      f.zone,
		"meta-data/private-ipv4": in.VpcAttributes.PrivateIpAddress.IpAddress[0],
		"user-data":              "#!/bin/sh\necho hello\n",
	} {
		if status, got := e.metadataGet(id, item, ""); status != 200 || got != want {
			t.Errorf("%s: %d %q, want %q", item, status, got, want)
		}
	}
	for _, path := range []string{id + "/latest/meta-data/no-such-item", "i-nosuchinstance/latest/meta-data/instance-id", id + "/meta-data/instance-id"} {
		if status, _ := e.metadataDo(mustRequest(t, http.MethodGet, e.srv.URL+MetadataPath+"/"+path)); status != 404 {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}
	none := e.runWithRole(f, "", 1)[0]
	if status, _ := e.metadataGet(none, "user-data", ""); status != 404 {
		t.Errorf("user-data of an instance given none: %d, want 404", status)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	must(t, err)
	return req
}

// Hardened mode: a token lives its TTL (1 to 21600 s) and serves only the instance it was issued
// to; a request without a token is still served (normal mode).
func TestMetadataHardenedModeToken(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	ids := e.runWithRole(f, "", 2)
	for _, ttl := range []string{"", "0", "21601", "soon"} {
		if status, _ := e.metadataToken(ids[0], ttl); status != 400 {
			t.Errorf("TTL %q: %d, want 400", ttl, status)
		}
	}
	status, tok := e.metadataToken(ids[0], "60")
	if status != 200 || tok == "" {
		t.Fatalf("token: %d %q", status, tok)
	}
	if status, got := e.metadataGet(ids[0], "meta-data/instance-id", tok); status != 200 || got != ids[0] {
		t.Errorf("with its token: %d %q", status, got)
	}
	if status, _ := e.metadataGet(ids[1], "meta-data/instance-id", tok); status != 401 {
		t.Errorf("another instance's token: %d, want 401", status)
	}
	if status, _ := e.metadataGet(ids[0], "meta-data/instance-id", "forged"); status != 401 {
		t.Errorf("a forged token: %d, want 401", status)
	}
	e.advance(61 * time.Second)
	if status, _ := e.metadataGet(ids[0], "meta-data/instance-id", tok); status != 401 {
		t.Errorf("an expired token: %d, want 401", status)
	}
	if status, got := e.metadataGet(ids[0], "meta-data/instance-id", ""); status != 200 || got != ids[0] {
		t.Errorf("normal mode: %d %q", status, got)
	}
}

// An instance with a role lists it and gets STS keys of it that live an hour and are handed out
// again until near their end; an instance without a role, or asking for another role, gets 404.
func TestMetadataRoleKeys(t *testing.T) {
	e, id, none := newRoleEnv(t)

	if status, got := e.metadataGet(id, "meta-data/ram/security-credentials/", ""); status != 200 || got != "gpucluster-node" {
		t.Fatalf("role list: %d %q", status, got)
	}
	c := e.roleKeysOf(id, "gpucluster-node")
	exp, err := time.Parse(core.TimeFormat, c.Expiration)
	must(t, err)
	if c.Code != "Success" || !strings.HasPrefix(c.AccessKeyID, "STS.") || c.AccessKeySecret == "" || c.SecurityToken == "" ||
		c.LastUpdated == "" || exp.Sub(e.s.now()) < 59*time.Minute || exp.Sub(e.s.now()) > roleKeyLife {
		t.Fatalf("role keys: %+v", c)
	}
	if again := e.roleKeysOf(id, "gpucluster-node"); again.AccessKeyID != c.AccessKeyID {
		t.Errorf("a live key was replaced: %s then %s", c.AccessKeyID, again.AccessKeyID)
	}
	e.advance(roleKeyLife - roleKeyRefresh + time.Second)
	if next := e.roleKeysOf(id, "gpucluster-node"); next.AccessKeyID == c.AccessKeyID {
		t.Errorf("a key near its end was handed out again")
	}
	for _, path := range []string{none + "/latest/meta-data/ram/security-credentials/", none + "/latest/meta-data/ram/security-credentials/gpucluster-node",
		id + "/latest/meta-data/ram/security-credentials/other-role"} {
		if status, _ := e.metadataDo(mustRequest(t, http.MethodGet, e.srv.URL+MetadataPath+"/"+path)); status != 404 {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}
}

// The Kubernetes Cluster Autoscaler's alicloud provider, run on an ECS instance without an
// AccessKey, lists the role at meta-data/ram/security-credentials/ and then fetches its keys at
// meta-data/Ram/security-credentials/<role>, capital R
// (https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.36.1/cluster-autoscaler/cloudprovider/alicloud/metadata/metadata.go,
// RAM_SECURITY), which the metadata service on ECS answers like the lower-case item: the
// autoscaler's documented instance-RAM-role mode works on the cloud
// (https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.36.1/cluster-autoscaler/cloudprovider/alicloud/README.md).
func TestMetadataRoleKeysCapitalRamItem(t *testing.T) {
	e, id, none := newRoleEnv(t)
	status, body := e.metadataGet(id, "meta-data/Ram/security-credentials/gpucluster-node", "")
	if status != http.StatusOK {
		t.Fatalf("Ram/security-credentials/<role>: %d %s", status, body)
	}
	var c roleCredentials
	must(t, json.Unmarshal([]byte(body), &c))
	if c.Code != "Success" || c.AccessKeyID != e.roleKeysOf(id, "gpucluster-node").AccessKeyID {
		t.Fatalf("Ram/ item answered %+v, not the role's current keys", c)
	}
	if status, _ := e.metadataGet(none, "meta-data/Ram/security-credentials/gpucluster-node", ""); status != http.StatusNotFound {
		t.Errorf("an instance without the role: %d, want 404", status)
	}
}
