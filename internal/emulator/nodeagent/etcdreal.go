package nodeagent

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// The cluster's real etcd (issue #34). etcd.go keeps the member list kubeadm would make and judges
// a control-plane join by etcd's rule (a member add refused while a member does not answer).
// Given the offline cluster's etcd (EtcdWith), the agent also makes each change on it, the way
// kubeadm and the provider's scripts make it on the nodes, and etcd judges them itself: kubeadm
// init's member is the offline cluster's first; kubeadm join --control-plane adds the node's
// member as a learner, starts it and promotes it (a refusal fails the join with etcd's error);
// the member-removal script removes it; a member's process runs while its instance is Running, so
// a stopped or released control-plane node whose member stays in the list counts against etcd's
// quorum, as it does on the cloud.

// Etcd is the cluster's real etcd (offlinekube.Cluster).
type Etcd interface {
	// NameFirstEtcdMember names the first member after kubeadm init's node.
	NameFirstEtcdMember(name string)
	// JoinEtcdMember adds, starts and promotes name's member; the error is etcd's.
	JoinEtcdMember(ctx context.Context, name string) error
	// RemoveEtcdMember is etcdctl member remove of name's member.
	RemoveEtcdMember(ctx context.Context, name string) error
	// SetEtcdMemberRunning stops or starts name's member's process with its machine.
	SetEtcdMemberRunning(ctx context.Context, name string, running bool) error
}

// EtcdWith gives the agent the cluster's real etcd. Call it before the first control-plane node
// runs kubeadm init.
func (a *Agent) EtcdWith(e Etcd) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.etcd = e
}

// etcdOpTimeout bounds one membership change: a join starts a member and waits for it to catch
// up.
const etcdOpTimeout = 2 * time.Minute

// joinRealEtcd adds a joining control-plane node's member to the real etcd: "" when it joined (or
// the agent has no real etcd), else why kubeadm join fails. Caller holds a.mu.
func (a *Agent) joinRealEtcd(ctx context.Context, name string) string {
	if a.etcd == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, etcdOpTimeout)
	defer cancel()
	if err := a.etcd.JoinEtcdMember(ctx, name); err != nil {
		return "kubeadm join --control-plane fails adding this node's etcd member (as a learner, then promoted, as kubeadm does): " + err.Error()
	}
	return ""
}

// followEtcdPower runs each member's process while its instance is Running. Caller holds a.mu.
func (a *Agent) followEtcdPower(ctx context.Context, v emulator.View) {
	if a.etcd == nil || a.cluster == nil {
		return
	}
	running := map[string]bool{}
	for _, in := range v.Instances {
		running[in.ID] = in.Status == "Running"
	}
	for _, m := range a.cluster.etcd {
		opCtx, cancel := context.WithTimeout(ctx, etcdOpTimeout)
		if err := a.etcd.SetEtcdMemberRunning(opCtx, m.Name, running[m.InstanceID]); err != nil {
			a.logf("nodeagent: etcd member %s (instance %s): %v", m.Name, m.InstanceID, err)
		}
		cancel()
	}
}

// etcdRemoval is a member-removal script accepted this round, to be played on the real etcd.
type etcdRemoval struct {
	invokeID, id string
	names        []string
	retry        removeRetry
}

// removeRetry is how the script retries a refused `member remove` (bootstrap.EtcdRemoveTries,
// EtcdRemoveInterval): tries in all, interval apart; a script without the loop tries once.
type removeRetry struct {
	tries    int
	interval time.Duration
}

var (
	removeTriesRE    = regexp.MustCompile(`(?m)^\s*if \[ "\$tries" -ge ([0-9]+) \]; then echo "etcd member \$name: \$out" >&2; exit 1; fi$`)
	removeIntervalRE = regexp.MustCompile(`(?m)^\s*tries=\$\(\(tries \+ 1\)\)\n\s*sleep ([0-9]+)$`)
	removeLoopRE     = regexp.MustCompile(`(?m)^\s*until out=\$\(ectl member remove "\$id" 2>&1\); do$`)
)

// removeRetryOf reads the script's retry loop.
func removeRetryOf(script string) removeRetry {
	tries, interval := removeTriesRE.FindStringSubmatch(script), removeIntervalRE.FindStringSubmatch(script)
	if !removeLoopRE.MatchString(script) || tries == nil || interval == nil {
		return removeRetry{tries: 1}
	}
	n, _ := strconv.Atoi(tries[1])
	s, _ := strconv.Atoi(interval[1])
	return removeRetry{tries: max(n, 1), interval: time.Duration(s) * time.Second}
}

// startEtcdRemovals plays each removal this round accepted on its own goroutine, against the real
// etcd: each member removed, a refusal tried again as the script does; then the agent's list
// follows and the command finishes with the script's output.
func (a *Agent) startEtcdRemovals(ctx context.Context) {
	a.mu.Lock()
	due, e := a.removalsDue, a.etcd
	a.removalsDue = nil
	a.mu.Unlock()
	for _, r := range due {
		var removed []string
		var failure string
		a.finishInBackground(r.invokeID, r.id, func() { removed, failure = removeWithRetry(ctx, e, r, a.logf) }, func() (int, string) {
			var out strings.Builder
			for _, name := range removed {
				a.forgetEtcdMember(r.id, name, &out)
			}
			if failure != "" {
				a.logf("nodeagent: %s: removing etcd members failed: %s", r.id, failure)
				return 1, out.String() + failure
			}
			return 0, out.String()
		})
	}
}

// removeWithRetry removes r's members from e in order; it answers those removed and, if one was
// still refused after the script's tries, the script's line for it.
func removeWithRetry(ctx context.Context, e Etcd, r etcdRemoval, logf func(string, ...any)) (removed []string, failure string) {
	for _, name := range r.names {
		if err := removeOne(ctx, e, r, name, logf); err != nil && !strings.Contains(err.Error(), "not a member") {
			return removed, fmt.Sprintf("etcd member %s: %v\n", name, err)
		}
		removed = append(removed, name)
	}
	return removed, ""
}

// removeOne removes name's member, trying a refusal again as r's script does.
func removeOne(ctx context.Context, e Etcd, r etcdRemoval, name string, logf func(string, ...any)) error {
	for try := 1; ; try++ {
		opCtx, cancel := context.WithTimeout(ctx, etcdOpTimeout)
		err := e.RemoveEtcdMember(opCtx, name)
		cancel()
		if err == nil || strings.Contains(err.Error(), "not a member") || try >= r.retry.tries {
			return err
		}
		logf("nodeagent: %s: etcd refused removing member %s (try %d of %d): %v; the script tries again in %s", r.id, name, try, r.retry.tries, err, r.retry.interval)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.retry.interval):
		}
	}
}
