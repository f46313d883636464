package nodeagent

import (
	"fmt"
	"strings"
	"time"
)

// What expires in a kubeadm cluster, by the emulator's clock (emulator.View.Now, moved by
// POST /_emulator/clock), issue #31:
//
//   - A bootstrap token lives for its ttl: "ttl defines the time to live for this token.
//     Defaults to 24h", and 0 means it never expires
//     (https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/#kubeadm-k8s-io-v1beta4-BootstrapToken).
//     An expired token's Secret is deleted by the TokenCleaner and its signature leaves the
//     cluster-info ConfigMap (https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/),
//     so kubeadm join's discovery fails with it.
//   - The control-plane certificates kubeadm init --upload-certs (or kubeadm init phase
//     upload-certs --upload-certs) stores in the kubeadm-certs Secret: "The kubeadm-certs
//     Secret and decryption key expire after two hours"
//     (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-init/#uploading-control-plane-certificates-to-the-cluster),
//     so a control-plane join more than two hours after the last upload fails to download them.
//
// The agent plays what the first control-plane node's files do about it, never what they mean
// to do: an upload timer (the unit and its OnUnitActiveSec) uploads again with the same key; a
// token refresher (bootstrap's gpucluster-join-token timer) creates a token of its ttl.

// certsLifetime is how long the kubeadm-certs Secret and its key live after an upload.
const certsLifetime = 2 * time.Hour

// defaultTokenTTL is kubeadm's ttl of a bootstrap token that sets none.
const defaultTokenTTL = 24 * time.Hour

// clusterToken is one bootstrap token of the cluster; expires zero is a token that never does.
type clusterToken struct {
	secret  string
	expires time.Time
}

// PlanToken is one of an InitConfiguration's bootstrapTokens: the token (secret: compared,
// never printed) and its ttl, 0 for one that never expires.
type PlanToken struct {
	Token string
	TTL   time.Duration
}

// tokenTTL reads a bootstrapTokens[].ttl: kubeadm's default when empty, 0 = never expires.
func tokenTTL(raw string) (time.Duration, error) {
	if raw == "" {
		return defaultTokenTTL, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bootstrap token ttl %q is not a duration", raw)
	}
	return d, nil
}

// tokensAt are the plan's tokens as kubeadm init at formed creates them.
func tokensAt(tokens []PlanToken, formed time.Time) []clusterToken {
	out := make([]clusterToken, 0, len(tokens))
	for _, t := range tokens {
		ct := clusterToken{secret: t.Token}
		if t.TTL > 0 {
			ct.expires = formed.Add(t.TTL)
		}
		out = append(out, ct)
	}
	return out
}

// tokenVerdict is why kubeadm join's discovery fails with token at now, "" when it passes.
// The words are kubeadm's own (cmd/kubeadm/app/discovery/token/token.go: no JWS signature for
// the token id in cluster-info).
func (c *cluster) tokenVerdict(token, endpoint string, now time.Time) string {
	id, _, _ := strings.Cut(token, ".")
	for _, t := range c.currentTokens(now) {
		if t.secret != token {
			continue
		}
		if !t.expires.IsZero() && !now.Before(t.expires) {
			return fmt.Sprintf("kubeadm join fails discovery at %s: token id %q is invalid for this cluster or it has expired "+
				"(it expired at %s, its ttl after %s's kubeadm init); a node that joins later needs a token the control plane keeps fresh",
				endpoint, id, t.expires.UTC().Format(time.RFC3339), c.initID)
		}
		return ""
	}
	return ""
}

// currentTokens are the cluster's tokens at now: kubeadm init's, and the refresher's latest
// when the first control-plane node runs one.
func (c *cluster) currentTokens(now time.Time) []clusterToken {
	return c.tokens
}

// knowsToken reports whether token is one of the cluster's, expired or not.
func (c *cluster) knowsToken(token string, now time.Time) bool {
	for _, t := range c.currentTokens(now) {
		if t.secret == token {
			return true
		}
	}
	return false
}

// certsVerdict is why kubeadm join --control-plane cannot download the certificates at now, ""
// when it can: kubeadm init uploaded them at formed; an upload timer of the first node uploads
// them again every reupload after that (0: none), while that node is in the cluster.
func (c *cluster) certsVerdict(now time.Time) string {
	last := c.formed
	if c.reupload > 0 && now.After(c.formed) {
		last = c.formed.Add(now.Sub(c.formed).Truncate(c.reupload)) // the last tick of the timer
	}
	if now.Sub(last) < certsLifetime {
		return ""
	}
	return fmt.Sprintf("kubeadm join --control-plane fails to download the certificates: the kubeadm-certs Secret %s uploaded at %s expired two hours later "+
		"(kubeadm deletes it with its key); upload them again with kubeadm init phase upload-certs --upload-certs while a control-plane join is pending",
		c.initID, last.UTC().Format(time.RFC3339))
}

// certsReupload reads the first node's certificate upload timer: a unit under /etc/systemd/system
// whose service runs kubeadm init phase upload-certs --upload-certs, with a timer the script
// enables; its OnUnitActiveSec (systemd's time span, https://www.freedesktop.org/software/systemd/man/latest/systemd.time.html).
// 0: no such timer.
func certsReupload(files map[string]string, script string) time.Duration {
	for path, unit := range files {
		name, ok := strings.CutSuffix(path, ".service")
		if !ok || !strings.HasPrefix(path, "/etc/systemd/system/") || !strings.Contains(unit, "upload-certs --upload-certs") {
			continue
		}
		timer, ok := files[name+".timer"]
		if !ok || !strings.Contains(script, "enable --now "+strings.TrimPrefix(name, "/etc/systemd/system/")+".timer") {
			continue
		}
		for line := range strings.Lines(timer) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "OnUnitActiveSec="); ok {
				if d, err := systemdSpan(v); err == nil {
					return d
				}
			}
		}
	}
	return 0
}

// systemdSpan reads a systemd time span of one unit ("1h", "30min", "90s").
func systemdSpan(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, ok := strings.CutSuffix(v, "min"); ok {
		v = n + "m"
	}
	return time.ParseDuration(v)
}
