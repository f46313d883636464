package nodeagent

import (
	"fmt"
	"regexp"
	"slices"
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
//   - The control-plane certificates in the kubeadm-certs Secret (certs.go).
//
// The agent plays what the first control-plane node's files do about it, never what they mean
// to do: a token refresher (bootstrap's gpucluster-join-token timer) creates a token of its ttl.

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

// tokenVerdict is why kubeadm join's discovery fails with token at now, "" when it passes or is
// not one of the cluster's (join says that first). The words are kubeadm's own
// (cmd/kubeadm/app/discovery/token/token.go: no JWS signature for the token id in cluster-info).
func (c *cluster) tokenVerdict(token, endpoint string, now time.Time) string {
	t, ok := c.token(token)
	if !ok || t.expires.IsZero() || now.Before(t.expires) {
		return ""
	}
	id, _, _ := strings.Cut(token, ".")
	return fmt.Sprintf("kubeadm join fails discovery at %s: token id %q is invalid for this cluster or it has expired "+
		"(it expired at %s, its ttl after %s's kubeadm init); a node that joins later needs a token the control plane keeps fresh",
		endpoint, id, t.expires.UTC().Format(time.RFC3339), c.initID)
}

// token finds secret among the cluster's tokens (kubeadm init's and the join-token timer's),
// expired or not.
func (c *cluster) token(secret string) (clusterToken, bool) {
	i := slices.IndexFunc(c.tokens, func(t clusterToken) bool { return t.secret == secret })
	if i < 0 {
		return clusterToken{}, false
	}
	return c.tokens[i], true
}

// systemdSpan reads a systemd time span of one unit ("1h", "30min", "90s").
func systemdSpan(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, ok := strings.CutSuffix(v, "min"); ok {
		v = n + "m"
	}
	return time.ParseDuration(v)
}

// ObjectWriter stores body at bucket/key as a program on the instance would with the keys its
// metadata service hands out for role (emulator.Server.WriteObjectAsInstance).
type ObjectWriter func(instanceID, role, bucket, key string, body []byte) error

// WriteObjectsWith gives the agent the emulator's OSS to play the control plane's join-token
// timer against. Call it before Run. Without it the timer's puts fail, as they would without OSS.
func (a *Agent) WriteObjectsWith(write ObjectWriter) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writeObject = write
}

// storeRef is one object of the join store as the fetch script's get|put arguments name it.
type storeRef struct{ Endpoint, Bucket, Key, Role string }

// TokenPublisher is a control-plane node's join-token timer, read from its files: the ttl of the
// tokens its script creates (kubeadm token create --ttl), how often the timer runs, and where
// each token is put.
type TokenPublisher struct {
	TTL, Period time.Duration
	To          []storeRef
}

var (
	tokenCreateRE = regexp.MustCompile(`kubeadm token create --ttl (\S+)`)
	storeRE       = regexp.MustCompile(`gpucluster-fetch-bundle\.sh (get|put) \S+ (\S+) \S+ (\S+) (\S+) ([A-Za-z0-9.-]+)`)
)

// tokenPublisher reads a join-token timer from a control-plane node's files: a unit whose script
// creates a token and puts it, with a timer the bootstrap enables. nil: none.
func tokenPublisher(files map[string]string, script string) *TokenPublisher {
	for _, t := range enabledTimers(files, script) {
		m := tokenCreateRE.FindStringSubmatch(t.body)
		if m == nil {
			continue
		}
		p := &TokenPublisher{Period: t.period}
		var err error
		if p.TTL, err = tokenTTL(m[1]); err != nil {
			continue
		}
		for _, s := range storeRE.FindAllStringSubmatch(t.body, -1) {
			if s[1] == "put" {
				p.To = append(p.To, storeRef{Endpoint: s[2], Bucket: s[3], Key: s[4], Role: s[5]})
			}
		}
		return p
	}
	return nil
}

// enabledTimer is a service under /etc/systemd/system with a timer the bootstrap script enables:
// its ExecStart command, the content of the script that command names when the node's files hold
// it ("" otherwise) and the arguments it passes, and the time between the timer's runs
// (timerPeriod; 0 when the agent cannot tell).
type enabledTimer struct {
	exec, body, args string
	period           time.Duration
}

// enabledTimers are the node's enabled timers.
func enabledTimers(files map[string]string, script string) []enabledTimer {
	var out []enabledTimer
	for path, unit := range files {
		name, ok := strings.CutSuffix(path, ".service")
		if !ok || !strings.HasPrefix(path, "/etc/systemd/system/") {
			continue
		}
		_, exec, ok := strings.Cut(unit, "ExecStart=")
		if !ok || !enablesTimer(script, strings.TrimPrefix(name, "/etc/systemd/system/")+".timer") {
			continue
		}
		exec, _, _ = strings.Cut(exec, "\n")
		t := enabledTimer{exec: strings.TrimSpace(exec)}
		program, args, _ := strings.Cut(t.exec, " ")
		t.body, t.args = files[program], strings.TrimSpace(args)
		t.period = timerPeriod(files[name+".timer"])
		out = append(out, t)
	}
	return out
}

// enablesTimer reports whether the script runs systemctl enable --now with timer among its units.
func enablesTimer(script, timer string) bool {
	for line := range strings.Lines(script) {
		_, units, ok := strings.Cut(line, "enable --now ")
		if !ok {
			continue
		}
		for _, u := range strings.Fields(units) {
			if u == timer {
				return true
			}
			if strings.HasPrefix(u, "-") || !strings.Contains(u, ".") {
				break // the end of the unit list: a shell operator or a word that is no unit
			}
		}
	}
	return false
}

// calendarPeriods are the OnCalendar shorthands of a fixed period, as systemd expands them
// ("daily" is *-*-* 00:00:00, https://www.freedesktop.org/software/systemd/man/latest/systemd.time.html#Calendar%20Events);
// a month is played as its longest, 31 days, the longest wait between two runs.
var calendarPeriods = map[string]time.Duration{"hourly": time.Hour, "daily": 24 * time.Hour, "weekly": 7 * 24 * time.Hour, "monthly": 31 * 24 * time.Hour}

// timerPeriod reads a timer unit's period: its OnUnitActiveSec, else an OnCalendar shorthand.
func timerPeriod(timer string) time.Duration {
	var active, calendar time.Duration
	for line := range strings.Lines(timer) {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "OnUnitActiveSec="); ok {
			active, _ = systemdSpan(v)
		}
		if v, ok := strings.CutPrefix(line, "OnCalendar="); ok {
			calendar = calendarPeriods[strings.TrimSpace(v)]
		}
	}
	if active > 0 {
		return active
	}
	return calendar
}

// storedTokenRef is where a joining node's script reads its token (bootstrap's stored_token), nil
// when it joins with the token of its configuration.
func storedTokenRef(script string) *storeRef {
	for line := range strings.Lines(script) {
		if !strings.Contains(line, "stored_token() {") {
			continue
		}
		if s := storeRE.FindStringSubmatch(line); s != nil && s[1] == "get" {
			return &storeRef{Endpoint: s[2], Bucket: s[3], Key: s[4], Role: s[5]}
		}
	}
	return nil
}

// refresher is the join-token timer the agent plays: the control-plane node that runs it, when
// it first ran, and how many ticks it has played.
type refresher struct {
	instanceID string
	pub        TokenPublisher
	since      time.Time
	ticks      int64
}

// startRefresher is the bootstrap's `systemctl start` of the token unit on a control-plane node
// that registers with a timer: the first that does runs it (another node's timer only stores
// tokens of the same kind). Caller holds a.mu.
func (a *Agent) startRefresher(in string, p NodePlan) {
	if c := a.cluster; c != nil && c.refresher == nil && p.TokenPublisher != nil {
		c.refresher = &refresher{instanceID: in, pub: *p.TokenPublisher, since: a.now, ticks: -1}
		a.refreshTokens()
	}
}

// refreshTokens plays the timer's runs up to now: each creates a token of its ttl and puts it at
// every key with the node's role, judged by the bucket policy; only the last run's token matters
// to a node that reads the store now. A timer whose node left the cluster runs no more.
func (a *Agent) refreshTokens() {
	c := a.cluster
	if c == nil || c.refresher == nil || a.registered[c.refresher.instanceID] == "" {
		return
	}
	r := c.refresher
	tick := int64(0)
	if r.pub.Period > 0 {
		tick = int64(a.now.Sub(r.since) / r.pub.Period)
	}
	if tick <= r.ticks {
		return
	}
	r.ticks = tick
	created := r.since.Add(time.Duration(tick) * r.pub.Period)
	// A fresh token, as kubeadm token create makes one: its id numbers it among the cluster's
	// tokens, which only grow.
	token := fmt.Sprintf("%06x.%016x", len(c.tokens), created.UnixNano())
	ct := clusterToken{secret: token}
	if r.pub.TTL > 0 {
		ct.expires = created.Add(r.pub.TTL)
	}
	c.tokens = append(c.tokens, ct)
	for _, to := range r.pub.To {
		err := fmt.Errorf("the emulator plays no OSS for the node agent (WriteObjectsWith)")
		if a.writeObject != nil {
			err = a.writeObject(r.instanceID, to.Role, to.Bucket, to.Key, []byte(token))
		}
		if err != nil {
			a.logf("nodeagent: %s: the join-token timer's PUT %s/%s failed: %v", r.instanceID, to.Endpoint, to.Key, err)
		}
	}
}

// storedToken is the token a joining node's stored_token reads, or why it cannot: the fetch
// script's get with the node's role, judged by the bucket policy.
func (a *Agent) storedToken(in string, ref *storeRef) (string, string) {
	if a.readObject == nil {
		return "", fmt.Sprintf("stored_token: GET %s/%s: the emulator plays no OSS for the node agent (ReadObjectsWith)", ref.Endpoint, ref.Key)
	}
	b, err := a.readObject(in, ref.Role, ref.Bucket, ref.Key)
	if err != nil {
		return "", fmt.Sprintf("stored_token: GET %s/%s: %v: the node has no join token (is the control plane's join-token timer storing one there, and may role %s read it?)",
			ref.Endpoint, ref.Key, err, ref.Role)
	}
	return string(b), ""
}
