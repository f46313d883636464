// Package ecsmetadata reads the ECS instance metadata service, the one place its address is
// written: the bootstrap's scripts, the bootstrap bundle's stub and the GPU health agent all take
// it from here.
//
// The service answers on every instance at http://100.100.100.200/latest/...; the RAM role the
// instance was given answers its temporary keys at meta-data/ram/security-credentials/<role>
// (https://www.alibabacloud.com/help/en/ecs/user-guide/obtain-a-temporary-authorization-token,
// and, for both access modes,
// https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata).
package ecsmetadata

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Address is the metadata service's address as every ECS instance reaches it.
const Address = "100.100.100.200"

// Endpoint is the service's base URL; the items are under Endpoint + "/latest/".
const Endpoint = "http://" + Address

// The hardened mode: PUT latest/api/token with the TTL header answers a token, sent back in the
// token header on every read (https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata).
const (
	ttlHeader   = "X-aliyun-ecs-metadata-token-ttl-seconds"
	tokenHeader = "X-aliyun-ecs-metadata-token"
	tokenTTL    = "60"
)

// Client reads one instance's metadata.
type Client struct {
	// Endpoint is the service's base URL; "" is Endpoint. Tests point it at the emulator's
	// per-instance service.
	Endpoint string
	// HTTP makes the requests; nil is a client with a 5-second timeout.
	HTTP *http.Client
}

// RoleKeys are the temporary keys of the instance's RAM role. They are secret: never log them.
type RoleKeys struct {
	AccessKeyID     string `json:"AccessKeyId"`
	AccessKeySecret string `json:"AccessKeySecret"`
	SecurityToken   string `json:"SecurityToken"`
	Expiration      string `json:"Expiration"`
	Code            string `json:"Code"`
}

// String keeps the secret and the token out of any log line a RoleKeys ends up in.
func (k RoleKeys) String() string {
	return fmt.Sprintf("RoleKeys{AccessKeyID: %s, Expiration: %s}", k.AccessKeyID, k.Expiration)
}

// Get answers one item under latest/, such as "meta-data/instance-id". It asks for a hardened
// mode token first and reads without one when that is refused, so it works in either mode.
func (c Client) Get(ctx context.Context, item string) (string, error) {
	return c.get(ctx, c.token(ctx), item)
}

// get reads item with token ("" in normal mode).
func (c Client) get(ctx context.Context, token, item string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/latest/"+item, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set(tokenHeader, token)
	}
	body, status, err := c.do(req)
	if err != nil {
		return "", fmt.Errorf("reading instance metadata %s: %w", item, err)
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("reading instance metadata %s: HTTP %d", item, status)
	}
	return strings.TrimSpace(body), nil
}

// InstanceID answers the instance's id.
func (c Client) InstanceID(ctx context.Context) (string, error) {
	return c.Get(ctx, "meta-data/instance-id")
}

// RegionID answers the instance's region.
func (c Client) RegionID(ctx context.Context) (string, error) {
	return c.Get(ctx, "meta-data/region-id")
}

// RoleKeys answers the current keys of the instance's RAM role. The service renews them before
// they expire, so a long-running program asks again for each piece of work rather than keeping
// them.
func (c Client) RoleKeys(ctx context.Context) (RoleKeys, error) {
	token := c.token(ctx) // one token for both reads: it lives tokenTTL seconds
	role, err := c.get(ctx, token, "meta-data/ram/security-credentials/")
	if err != nil {
		return RoleKeys{}, fmt.Errorf("the instance has no RAM role (give its pool ram_role_name): %w", err)
	}
	role, _, _ = strings.Cut(role, "\n")
	raw, err := c.get(ctx, token, "meta-data/ram/security-credentials/"+role)
	if err != nil {
		return RoleKeys{}, err
	}
	var keys RoleKeys
	if err := json.Unmarshal([]byte(raw), &keys); err != nil {
		return RoleKeys{}, fmt.Errorf("the keys of RAM role %s are not JSON: %w", role, err)
	}
	if keys.Code != "Success" || keys.AccessKeyID == "" || keys.AccessKeySecret == "" {
		return RoleKeys{}, fmt.Errorf("the metadata service gave no keys for RAM role %s (Code %q)", role, keys.Code)
	}
	return keys, nil
}

func (c Client) base() string {
	if c.Endpoint == "" {
		return Endpoint
	}
	return strings.TrimSuffix(c.Endpoint, "/")
}

// token asks for a hardened mode token; "" when the service gives none (normal mode).
func (c Client) token(ctx context.Context) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.base()+"/latest/api/token", nil)
	if err != nil {
		return ""
	}
	req.Header.Set(ttlHeader, tokenTTL)
	body, status, err := c.do(req)
	if err != nil || status != http.StatusOK {
		return ""
	}
	return strings.TrimSpace(body)
}

func (c Client) do(req *http.Request) (string, int, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(body), resp.StatusCode, err
}
