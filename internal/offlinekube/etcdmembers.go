package offlinekube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The cluster's etcd membership, real (issue #34). kubeadm runs etcd stacked on every
// control-plane node: kubeadm init makes the first member, kubeadm join --control-plane adds the
// joining node's member as a learner, starts it, and promotes it to a voting member once it has
// caught up (AddMemberAsLearner, then MemberPromote: cmd/kubeadm/app/phases/etcd/local.go,
// https://github.com/kubernetes/kubernetes/blob/v1.37.2/cmd/kubeadm/app/phases/etcd/local.go;
// learner mode is kubeadm's only way since EtcdLearnerMode graduated,
// https://kubernetes.io/blog/2023/09/25/kubeadm-use-etcd-learner-mode/), and
// `etcdctl member remove` takes a member out. The offline cluster plays each control-plane node's
// member as a process of its own (tools/testkube/cmd/etcd, etcd v3.7.0, the release kubeadm
// v1.37 pins: DefaultEtcdVersion "3.7.0-0" in cmd/kubeadm/app/constants), so etcd itself judges
// every change: a member add that would leave the connected voting members short of a quorum is
// refused ("etcdserver: unhealthy cluster", mayAddMember with --strict-reconfig-check), a stopped
// member's machine counts against quorum until it is removed, and two of three stopped leave no
// leader. The node agent makes the changes kubeadm and the provider's scripts make
// (nodeagent.Agent.EtcdWith).
//
// The cluster's etcd endpoint (what kube-apiserver, the snapshots and EtcdHealth use) is a front
// that relays to a running member (apifront.go's relay): kube-apiserver on a control-plane node
// talks to its own member, and here one API server stands for all of them.

// etcdMember is one member's process and addresses. name is the node it stands for (the first
// is etcdMemberName until the agent names it after kubeadm init's node).
type etcdMember struct {
	name                        string
	clientURL, peerURL, dataDir string
	proc                        *process // nil while its machine is stopped
}

// EtcdMemberStatus is one member of etcd's member list (MemberList, as etcdctl member list shows
// it) and whether its process runs.
type EtcdMemberStatus struct {
	Name    string `json:"name"`
	Learner bool   `json:"learner"`
	Running bool   `json:"running"`
}

// etcdClient is a client of the cluster's etcd through its front.
func (c *Cluster) etcdClient() (*clientv3.Client, error) {
	return etcdClientOf(c.etcdURL)
}

// etcdClientOf is a client of the etcd member (or front) at url.
func etcdClientOf(url string) (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("offlinekube: etcd client: %w", err)
	}
	return cli, nil
}

// NameFirstEtcdMember names the first member after the node kubeadm init ran on.
func (c *Cluster) NameFirstEtcdMember(name string) {
	c.etcdMu.Lock()
	defer c.etcdMu.Unlock()
	if len(c.etcdMembers) > 0 {
		c.etcdMembers[0].name = name
	}
}

// JoinEtcdMember adds name's member as kubeadm join --control-plane does: added as a learner
// (which etcd may refuse: the error is etcd's), started, and promoted once it has caught up.
// The same name again is a no-op.
func (c *Cluster) JoinEtcdMember(ctx context.Context, name string) error {
	c.etcdMu.Lock()
	defer c.etcdMu.Unlock()
	if c.etcdMemberNamed(name) != nil {
		return nil
	}
	ports, err := pickPorts(2)
	if err != nil {
		return err
	}
	m := &etcdMember{name: name, clientURL: "http://127.0.0.1:" + strconv.Itoa(ports[0]), peerURL: "http://127.0.0.1:" + strconv.Itoa(ports[1]),
		dataDir: filepath.Join(c.workDir, "etcd-"+name)}
	cli, err := c.etcdClient()
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }()
	added, err := addLearner(ctx, cli, m.peerURL)
	if err != nil {
		return fmt.Errorf("etcd member add (learner) %s: %w", name, err)
	}
	var initial []string
	for _, member := range added.Members {
		memberName := member.Name
		if member.ID == added.Member.ID {
			memberName = name
		}
		for _, u := range member.PeerURLs {
			initial = append(initial, memberName+"="+u)
		}
	}
	if err := c.startEtcdMember(ctx, m, "existing", strings.Join(initial, ",")); err != nil {
		return err
	}
	c.etcdMembers = append(c.etcdMembers, m)
	// etcd promotes a learner only once its log has caught up with the leader's ("can only
	// promote a learner member which is in sync with leader"); kubeadm retries likewise.
	deadline := time.Now().Add(30 * time.Second)
	for {
		promoteCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := cli.MemberPromote(promoteCtx, added.Member.ID)
		cancel()
		if err == nil {
			c.logf("offlinekube: etcd member %s joined (learner, then promoted) at %s", name, m.clientURL)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("etcd member promote %s: %w", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// addLearnerRetry is how long addLearner retries a refusal for an unhealthy cluster: etcd counts
// a member connected once it has been for its health interval (5 s, HealthInterval in
// etcdserver), so a member that joined a moment ago is not counted yet; kubeadm retries a
// refused add likewise (addMember in cmd/kubeadm/app/util/etcd/etcd.go polls until its etcd API
// timeout). A cluster short of a quorum for longer is refused.
const addLearnerRetry = 8 * time.Second

// addLearner is MemberAddAsLearner of peerURL, retried while etcd says the cluster is unhealthy.
func addLearner(ctx context.Context, cli *clientv3.Client, peerURL string) (*clientv3.MemberAddResponse, error) {
	deadline := time.Now().Add(addLearnerRetry)
	for {
		addCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		added, err := cli.MemberAddAsLearner(addCtx, []string{peerURL})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "unhealthy cluster") || time.Now().After(deadline) {
			return added, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// startEtcdMember runs m's process and waits until it answers /health. Caller holds etcdMu.
func (c *Cluster) startEtcdMember(ctx context.Context, m *etcdMember, state, initial string) error {
	args := []string{"--name=" + m.name, "--data-dir=" + m.dataDir, "--listen-client-url=" + m.clientURL, "--listen-peer-url=" + m.peerURL,
		"--initial-cluster-state=" + state}
	if initial != "" {
		args = append(args, "--initial-cluster="+initial)
	}
	p, err := c.run("etcd-"+m.name, filepath.Join(c.binDir, "etcd"), c.layout.logDir, args, nil)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := waitFor(waitCtx, p, 100*time.Millisecond, httpOK(m.clientURL+"/health")); err != nil {
		c.retire(p)
		return fmt.Errorf("etcd member %s did not start: %w", m.name, err)
	}
	m.proc = p
	c.pointEtcdFront(nil)
	return nil
}

// RemoveEtcdMember is `etcdctl member remove` of name's member: etcd takes it out of its list
// (the error is etcd's), and its process stops.
func (c *Cluster) RemoveEtcdMember(ctx context.Context, name string) error {
	c.etcdMu.Lock()
	defer c.etcdMu.Unlock()
	m := c.etcdMemberNamed(name)
	if m == nil {
		return fmt.Errorf("etcd member %s: not a member", name)
	}
	// etcdctl runs on a node that stays, against its own member: a member that removes itself
	// stops at once and answers "server stopped", not the removal. The front, too, moves off the
	// member before it goes.
	staying := c.runningEtcdMember(m)
	if staying == nil {
		return fmt.Errorf("etcd member remove %s: no other member runs to ask", name)
	}
	c.pointEtcdFront(m)
	cli, err := etcdClientOf(staying.clientURL)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }()
	opCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	list, err := cli.MemberList(opCtx)
	if err != nil {
		return fmt.Errorf("etcd member list: %w", err)
	}
	i := slices.IndexFunc(list.Members, func(e *etcdserverpb.Member) bool { return slices.Contains(e.PeerURLs, m.peerURL) })
	if i < 0 {
		return fmt.Errorf("etcd member %s (%s): not in etcd's member list", name, m.peerURL)
	}
	if _, err := cli.MemberRemove(opCtx, list.Members[i].ID); err != nil {
		return fmt.Errorf("etcd member remove %s: %w", name, err)
	}
	c.etcdMembers = slices.DeleteFunc(c.etcdMembers, func(e *etcdMember) bool { return e == m })
	if m.proc != nil {
		c.retire(m.proc) // etcd stops a removed member itself; this waits for it
	}
	_ = os.RemoveAll(m.dataDir)
	c.logf("offlinekube: etcd member %s removed", name)
	return nil
}

// SetEtcdMemberRunning stops name's member's process (its machine stopped or was released: the
// member stays in etcd's list) or starts it again on its data (the machine runs again).
func (c *Cluster) SetEtcdMemberRunning(ctx context.Context, name string, running bool) error {
	c.etcdMu.Lock()
	defer c.etcdMu.Unlock()
	m := c.etcdMemberNamed(name)
	if m == nil || (m.proc != nil) == running {
		return nil
	}
	if !running {
		p := m.proc
		m.proc = nil
		c.pointEtcdFront(nil)
		c.retire(p)
		c.logf("offlinekube: etcd member %s stopped", name)
		return nil
	}
	// Restarted on its data directory, the member rejoins with what it has.
	if err := c.startEtcdMember(ctx, m, "existing", ""); err != nil {
		return err
	}
	c.logf("offlinekube: etcd member %s runs again", name)
	return nil
}

// EtcdMemberList is etcd's member list, each member named as the agent named it.
func (c *Cluster) EtcdMemberList(ctx context.Context) ([]EtcdMemberStatus, error) {
	cli, err := c.etcdClient()
	if err != nil {
		return nil, err
	}
	defer func() { _ = cli.Close() }()
	opCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := cli.MemberList(opCtx)
	if err != nil {
		return nil, fmt.Errorf("etcd member list: %w", err)
	}
	c.etcdMu.Lock()
	defer c.etcdMu.Unlock()
	out := make([]EtcdMemberStatus, 0, len(list.Members))
	for _, e := range list.Members {
		st := EtcdMemberStatus{Name: e.Name, Learner: e.IsLearner}
		for _, m := range c.etcdMembers {
			if slices.Contains(e.PeerURLs, m.peerURL) {
				st.Name, st.Running = m.name, m.proc != nil
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// EtcdHealth is nil when the cluster's etcd answers its /health with 200 (it has a leader and
// serves reads), the check etcd's own clients and kubeadm's health phase use.
func (c *Cluster) EtcdHealth(ctx context.Context) error {
	_, err := httpOK(c.etcdURL + "/health")(ctx)
	return err
}

// etcdMemberNamed is name's member, nil if none. Caller holds etcdMu.
func (c *Cluster) etcdMemberNamed(name string) *etcdMember {
	for _, m := range c.etcdMembers {
		if m.name == name {
			return m
		}
	}
	return nil
}

// runningEtcdMember is the first member whose process runs, other than except; nil if none.
// Caller holds etcdMu.
func (c *Cluster) runningEtcdMember(except *etcdMember) *etcdMember {
	for _, m := range c.etcdMembers {
		if m.proc != nil && m != except {
			return m
		}
	}
	return nil
}

// pointEtcdFront sends the front's new connections to the first running member other than
// except (nil: any). Caller holds etcdMu.
func (c *Cluster) pointEtcdFront(except *etcdMember) {
	if m := c.runningEtcdMember(except); m != nil {
		c.etcdFrontOf().setBackend(strings.TrimPrefix(m.clientURL, "http://"))
	}
}

// etcdFrontOf is the etcd front (nil once stopped: setBackend is then a no-op).
func (c *Cluster) etcdFrontOf() *front {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.etcdFront
}
