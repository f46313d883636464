package nodeagent

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The control plane's etcd snapshot timer (issue #34, bootstrap's gpucluster-etcd-snapshot):
// every control-plane node saves a snapshot of its etcd member with etcdctl snapshot save in the
// etcd container and puts it in OSS with its RAM role. The agent plays each run from the node's
// files: it takes a real snapshot of the cluster's etcd (SnapshotEtcdWith: the offline cluster's,
// through etcd's client API, as etcdctl does) and stores it where the script puts it, as the
// node's role, judged by the bucket policy. What the real node needs for the run to work, and the
// agent checks before it plays one: etcdctl run in the etcd container against the loopback
// member with kubeadm's etcd PKI (etcd.go, etcdctlProblem), and the snapshot written under
// /var/lib/etcd: of the host, kubeadm's etcd static pod mounts only its data directory and the
// etcd PKI (GetEtcdPodSpec, the etcd-data and etcd-certs hostPath volumes,
// https://github.com/kubernetes/kubernetes/blob/v1.33.0/cmd/kubeadm/app/phases/etcd/local.go),
// so a file etcdctl writes anywhere else stays in the container and the host's put finds none.

// EtcdSnapshotter is a control-plane node's snapshot timer, read from its files: how often it
// runs, where etcdctl writes the file, and where the put stores it (the key is
// <Prefix>/<UTC time>-<host name>.db).
type EtcdSnapshotter struct {
	Period time.Duration
	File   string
	To     storeRef // Key is the prefix
	// Problem is why the script's etcdctl fails on a real node ("" when it works), with its
	// exit code.
	Problem string
	Code    int
}

var (
	snapshotSaveRE = regexp.MustCompile(`(?m)^snap=(\S+)$`)
	snapshotPutRE  = regexp.MustCompile(`gpucluster-fetch-bundle\.sh put (\S+) (\S+) \S+ (\S+) (\S+)/"\$\(date -u \+%Y%m%dT%H%M%SZ\)-\$\(hostname\)\.db" ([A-Za-z0-9.-]+) <"\$snap"`)
)

// etcdSnapshotter reads the snapshot timer from a control-plane node's files: an enabled timer
// whose script runs etcdctl snapshot save and puts the file. nil: none.
func etcdSnapshotter(files map[string]string, script string) *EtcdSnapshotter {
	for _, t := range enabledTimers(files, script) {
		if !strings.Contains(t.body, "snapshot save") {
			continue
		}
		put, file := snapshotPutRE.FindStringSubmatch(t.body), snapshotSaveRE.FindStringSubmatch(t.body)
		if put == nil || file == nil {
			continue
		}
		s := &EtcdSnapshotter{Period: t.period, File: file[1], To: storeRef{Endpoint: put[2], Bucket: put[3], Key: put[4], Role: put[5]}}
		s.Code, s.Problem = etcdctlProblem(t.body)
		if s.Problem == "" && !strings.HasPrefix(s.File, "/var/lib/etcd/") {
			s.Code, s.Problem = 1, fmt.Sprintf("%s: No such file or directory (etcdctl wrote it in the etcd container, which mounts only /var/lib/etcd and the etcd PKI from the host)", s.File)
		}
		return s
	}
	return nil
}

// EtcdSnapshotRun is one run of a node's snapshot timer: where it stored the snapshot and how
// big it was, or why it failed.
type EtcdSnapshotRun struct {
	InstanceID string    `json:"instance_id"`
	At         time.Time `json:"at"`
	Bucket     string    `json:"bucket"`
	Key        string    `json:"key"`
	Bytes      int       `json:"bytes"`
	Error      string    `json:"error,omitempty"`
}

// maxSnapshotRuns bounds the runs the agent keeps: the latest are the ones a test or a person
// asks about.
const maxSnapshotRuns = 100

// snapshotTimer is one node's timer as the agent plays it: when it first ran, how many ticks
// it has played.
type snapshotTimer struct {
	plan  EtcdSnapshotter
	node  string
	since time.Time
	ticks int64
}

// SnapshotEtcdWith gives the agent the cluster's etcd to take snapshots of (such as
// offlinekube.Cluster.SnapshotEtcd). Call it before Run. Without it every run fails, as
// etcdctl does with no etcd to answer.
func (a *Agent) SnapshotEtcdWith(snapshot func() ([]byte, error)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.snapshotEtcd = snapshot
}

// EtcdSnapshots are the runs of the nodes' snapshot timers so far, oldest first.
func (a *Agent) EtcdSnapshots() []EtcdSnapshotRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]EtcdSnapshotRun(nil), a.snapshotRuns...)
}

// startSnapshotTimer is the bootstrap's `systemctl enable --now` of the timer and `systemctl
// start` of its service on a control-plane node that registers with one: a first run now.
// Caller holds a.mu.
func (a *Agent) startSnapshotTimer(in string, p NodePlan) {
	if p.EtcdSnapshotter == nil {
		return
	}
	if a.snapshotTimers == nil {
		a.snapshotTimers = map[string]*snapshotTimer{}
	}
	a.snapshotTimers[in] = &snapshotTimer{plan: *p.EtcdSnapshotter, node: p.NodeName, since: a.now, ticks: -1}
	a.playSnapshots()
}

// playSnapshots plays the timers' runs up to now: a node that left the cluster or whose kubelet
// is down (its etcd static pod with it) runs none; only the last due run of each is played, as
// systemd runs a missed OnUnitActiveSec tick once. Caller holds a.mu.
func (a *Agent) playSnapshots() {
	for id, t := range a.snapshotTimers {
		if a.registered[id] == "" {
			delete(a.snapshotTimers, id)
			continue
		}
		tick := int64(0)
		if t.plan.Period > 0 {
			tick = int64(a.now.Sub(t.since) / t.plan.Period)
		}
		if tick <= t.ticks || a.stopped[id] {
			continue
		}
		t.ticks = tick
		a.snapshotRuns = append(a.snapshotRuns, a.snapshotRun(id, t))
		if n := len(a.snapshotRuns); n > maxSnapshotRuns {
			a.snapshotRuns = a.snapshotRuns[n-maxSnapshotRuns:]
		}
	}
}

// snapshotRun is one run of node id's timer at the agent's clock.
func (a *Agent) snapshotRun(id string, t *snapshotTimer) EtcdSnapshotRun {
	to := t.plan.To
	run := EtcdSnapshotRun{InstanceID: id, At: a.now, Bucket: to.Bucket,
		Key: to.Key + "/" + a.now.UTC().Format("20060102T150405Z") + "-" + t.node + ".db"}
	fail := func(why string) EtcdSnapshotRun {
		run.Error = why
		a.logf("nodeagent: %s: the etcd snapshot timer failed: %s", id, why)
		return run
	}
	if t.plan.Problem != "" {
		return fail(fmt.Sprintf("exit status %d: %s", t.plan.Code, strings.TrimSpace(t.plan.Problem)))
	}
	if a.snapshotEtcd == nil {
		return fail("etcdctl snapshot save: context deadline exceeded (the emulator plays no etcd for the node agent: SnapshotEtcdWith)")
	}
	data, err := a.snapshotEtcd()
	if err != nil {
		return fail("etcdctl snapshot save: " + err.Error())
	}
	run.Bytes = len(data)
	if a.writeObject == nil {
		return fail(fmt.Sprintf("PUT %s/%s: the emulator plays no OSS for the node agent (WriteObjectsWith)", to.Endpoint, run.Key))
	}
	if err := a.writeObject(id, to.Role, to.Bucket, run.Key, data); err != nil {
		return fail(fmt.Sprintf("PUT %s/%s: %v (does the bucket policy let role %s write it?)", to.Endpoint, run.Key, err, to.Role))
	}
	a.logf("nodeagent: %s stored an etcd snapshot of %d bytes at %s/%s", id, len(data), to.Bucket, run.Key)
	return run
}
