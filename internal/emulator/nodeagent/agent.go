// Package nodeagent plays the nodes of the emulator's instances against a real Kubernetes API
// server. When an instance is Running, the agent reads its user data and does, statically, what
// the real node's cloud-init would: it decodes the cloud-config, checks that the bootstrap's
// downloads are reachable from the instance's network, that the join endpoint is reachable
// (load balancer listener, security groups) and every later connection to the API too, the API
// server name resolved as the node's /etc/hosts has it and no control-plane node going through
// the load balancer it backs (hairpin, reach.go), that the join token and CA hash match the
// cluster's, and that only one node runs kubeadm init. A node that would come up on the real
// cloud is registered as a kwok Node with the labels, taints and capacity its kubelet would
// register; the first control-plane node also applies its Flannel manifest and add-ons. A node
// that would fail does not register, and the agent says why (GET /_emulator/nodes).
//
// The agent also plays the instance's region (region.go, issue #29): from a Chinese mainland
// region a route out does not reach the hosts internal/regionreach lists, so a bootstrap that downloads or pulls images from them fails, naming each host, why, and the
// source; a node whose pod network's images cannot be pulled registers NotReady; an NVSwitch
// node without Fabric Manager registers with a condition saying CUDA cannot initialise.
//
// And it plays the node's image and the time the node takes (issue #30). A node booted from a
// custom image skips every phase the image's builder ran with the same function text, as the
// script's digest markers make the real node do, and pulls no image the builder pre-pulled
// (image.go); what it skips it does not fetch, so the route and region checks leave it out. Each
// node that registers carries a modeled time from RunInstances to Ready, with each step and what
// dominated it (boottime.go: the boot, the phases it still runs, its pulls, from cited figures or
// labelled estimates), in GET /_emulator/nodes, on its serial console after the bootstrap's lines
// and in the log; a node of an autoscaled pool whose kubelet would register after the Cluster
// Autoscaler's --max-node-provision-time gets a note that the autoscaler would give up on it
// (provision.go).
//
// A node whose user data is a bootstrap bundle's stub (issue #31) is played from its bundle,
// fetched as its instance role would fetch it (bundle.go).
package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// Kube is the API server the agent registers nodes with and applies add-ons to.
type Kube interface {
	RegisterNode(ctx context.Context, node *corev1.Node) error
	DeleteNode(ctx context.Context, name string) error
	// SetKubeletRunning says whether the node's kubelet runs: false when its instance stops
	// (the node goes NotReady), true when it runs again.
	SetKubeletRunning(ctx context.Context, name string, running bool) error
	// ApplyAddons applies the manifests in order, server-side, and reports every object.
	ApplyAddons(ctx context.Context, addons []Addon) []AddonResult
	// ShutdownNode plays the kubelet's graceful node shutdown (shutdown.go).
	ShutdownNode(ctx context.Context, name string, s ShutdownSettings) (ShutdownReport, error)
	// PodsRunningOn lists the node's pods that have not ended, DaemonSet and mirror pods aside.
	PodsRunningOn(ctx context.Context, name string) ([]string, error)
	// SetUnschedulable, DrainablePods and Evict are the calls of a node's drain (evictions.go):
	// cordon or uncordon, the pods it evicts (namespace/name), one eviction through the API.
	SetUnschedulable(ctx context.Context, name string, on bool) error
	DrainablePods(ctx context.Context, name string) ([]string, error)
	Evict(ctx context.Context, pod string) error
}

// AddonResult is the outcome of applying one object of an add-on file.
type AddonResult struct {
	File   string `json:"file"`
	Object string `json:"object"` // kind namespace/name
	Error  string `json:"error,omitempty"`
}

// NodeStatus is what the agent says of one instance.
type NodeStatus struct {
	InstanceID string `json:"instance_id"`
	Status     string `json:"instance_status"`
	Role       string `json:"role,omitempty"` // RoleInit, RoleControlPlane, RoleWorker
	// KubeletVersion is the kubelet release the node's bootstrap installs ("1.33.6", upgrade.go).
	KubeletVersion string `json:"kubelet_version,omitempty"`
	Node           string `json:"node,omitempty"` // the registered Node's name
	Reason         string `json:"reason,omitempty"`
	// Notes are what slows the node's boot without failing it (the region, judgeRegion).
	Notes []string `json:"notes,omitempty"`
	// Addons are the add-on objects the first control-plane node applied.
	Addons []AddonResult `json:"addons,omitempty"`
	// PodsReachMetadata: the node's pods reach the instance metadata service, its user data and
	// its role's credentials (metadataaccess.go); a note says so too.
	PodsReachMetadata bool `json:"pods_reach_metadata"`
	// ModeledReadySeconds and ModeledRegisteredSeconds are the model's time from RunInstances to
	// the node Ready and to its kubelet registering (boottime.go), Boot its steps; on a node that
	// registers. Ready is left out of a node that stays NotReady.
	ModeledReadySeconds      float64    `json:"modeled_ready_seconds,omitempty"`
	ModeledRegisteredSeconds float64    `json:"modeled_registered_seconds,omitempty"`
	Boot                     []BootStep `json:"boot,omitempty"`
	// Shutdown is what the kubelet's graceful node shutdown did when a normal StopInstances
	// stopped the instance (shutdown.go), until it runs again.
	Shutdown *ShutdownReport `json:"shutdown,omitempty"`
	// modelLine is the model in one line, for the serial console and the log.
	modelLine string
}

// Agent registers the emulator's instances as nodes. Sync does one round; Run repeats it.
type Agent struct {
	view func() emulator.View
	kube Kube
	logf func(format string, args ...any)

	mu         sync.Mutex
	cluster    *cluster
	plans      map[string]planEntry  // by instance id
	decoded    map[string]planEntry  // by user data: a pool's nodes share theirs, decoded once
	holds      map[string]imageHolds // by image id: what the nodes' custom images hold (image.go)
	registered map[string]string     // instance id -> node name
	stopped    map[string]bool       // registered instances whose kubelet is down
	notReady   map[string]string     // registered instances without a pod network: why
	statuses   map[string]NodeStatus
	addonsDone bool
	// The serial consoles (console.go): where they are written, what was written last, and
	// the instances refused in the current round.
	writeConsole func(instanceID, output string)
	consoles     map[string]string
	refused      map[string]bool
	// powerOff is the guest's own shutdown (an image builder's, builder.go); nil: builders
	// are judged and their consoles written, but they keep running.
	powerOff func(instanceID string)
	// builders are the image builders' consoles (kept while the instance exists: a stopped
	// builder's console still shows it baked), builderPlans the builders' plans by user data,
	// pendingPowerOff those that baked this round (builder.go).
	builders        map[string]string
	builderPlans    map[string]builderPlan
	pendingPowerOff []string
	// readObject reads a bundle as an instance's role would (bundle.go); fetchFailed are the
	// consoles of the instances whose fetch failed this round.
	readObject  ObjectReader
	fetchFailed map[string]string
	// The Cloud Assistant commands sent to the instances, and where their outcome goes (etcd.go).
	pendingCommands func() []emulator.PendingCommand
	finishCommand   func(invokeID, instanceID string, exitCode int, output string)
	// delayShutdown tells the emulator a guest delays a normal shutdown (shutdown.go; nil: the
	// agent plays no graceful node shutdown), shutDown what each node's shutdown did, failures
	// the nodes deleted while they still ran pods.
	delayShutdown func(instanceID string, d time.Duration)
	shutDown      map[string]*ShutdownReport // nil: under way
	failures      []Failure
	// shutdownTerminated are the pods every graceful node shutdown so far terminated,
	// "namespace/name on node" (ShutdownTerminated).
	shutdownTerminated []string
	// now is the emulator's clock in this round (emulator.View.Now; the wall clock for a view
	// without one): what bootstrap tokens and uploaded certificates expire by (tokens.go).
	now time.Time
	// gateWaits: when the acceptance gate's script began waiting, by invocation (acceptance.go).
	gateWaits map[string]time.Time
	// writeObject plays the control plane's join-token and etcd snapshot timers' puts
	// (tokens.go, etcdsnapshot.go).
	writeObject ObjectWriter
	// certs are the registered nodes' certificates of a year (certexpiry.go).
	certs map[string]*nodeCerts
	// snapshotEtcd takes a snapshot of the cluster's etcd; snapshotTimers are the control-plane
	// nodes' snapshot timers by instance id, snapshotRuns what their runs did (etcdsnapshot.go).
	snapshotEtcd   func() ([]byte, error)
	snapshotTimers map[string]*snapshotTimer
	snapshotRuns   []EtcdSnapshotRun
	// upgradeControlPlane replaces the cluster's control-plane binaries with a release's (nil:
	// kubeadm upgrade apply changes kubeadm-config's version only), upgradesDue the upgrades
	// this round accepted (upgrade.go).
	upgradeControlPlane func(ctx context.Context, release string) error
	upgradesDue         []controlPlaneUpgrade
	// underWay are the commands that finish on a goroutine of their own (an upgrade, a removal
	// of real etcd members), by invocation; background waits for those goroutines.
	underWay   map[string]bool
	background sync.WaitGroup
	// etcd is the cluster's real etcd (nil: the member list is etcd.go's model only;
	// etcdreal.go).
	etcd        Etcd
	removalsDue []etcdRemoval
}

// planEntry is one instance's plan: read from its user data, as its image makes it (image.go).
type planEntry struct {
	userData, imageID string
	plan              NodePlan
	err               error
}

// New makes an agent over the emulator's view; logf (may be nil) gets one line per change. With
// kube nil the agent plays image builders only (builder.go): an emulator without a Kubernetes API
// still bakes node images, and its other instances are left alone.
func New(view func() emulator.View, kube Kube, logf func(format string, args ...any)) *Agent {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Agent{view: view, kube: kube, logf: logf, plans: map[string]planEntry{}, decoded: map[string]planEntry{}, holds: map[string]imageHolds{}, registered: map[string]string{},
		stopped: map[string]bool{}, notReady: map[string]string{}, statuses: map[string]NodeStatus{}, shutDown: map[string]*ShutdownReport{}, certs: map[string]*nodeCerts{}}
}

// Run calls Sync every interval until ctx ends. Instances become Running lazily in the
// emulator (by time), so the agent polls; the emulator does no work for it between polls.
func (a *Agent) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	defer a.background.Wait() // a command under way ends with ctx
	for {
		a.Sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync looks at every instance once: first control-plane nodes first (in creation order), then
// joins until no more register in the round, so a worker that boots with its control plane
// registers in the same round. Once the first control-plane node is registered, its add-ons are
// applied (once), and the graceful shutdowns the round started are played, without holding up
// /_emulator/nodes meanwhile.
func (a *Agent) Sync(ctx context.Context) {
	initID, addons, shutdowns := a.round(ctx)
	for _, sd := range shutdowns {
		a.shutdown(ctx, sd)
	}
	a.startUpgrades(ctx)
	a.startEtcdRemovals(ctx)
	if initID == "" {
		return
	}
	results := a.kube.ApplyAddons(ctx, addons)
	failed := 0
	for _, r := range results {
		if r.Error != "" {
			failed++
			a.logf("nodeagent: %s: add-on %s %s: %s", initID, r.File, r.Object, r.Error)
		}
	}
	a.logf("nodeagent: %s applied %d add-on objects, %d failed", initID, len(results), failed)
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.statuses[initID]
	st.Addons = results
	a.statuses[initID] = st
}

// round registers what can register now, and returns the first control-plane node and its
// add-ons when they are to be applied, and the graceful node shutdowns to play.
func (a *Agent) round(ctx context.Context) (initID string, addons []Addon, shutdowns []nodeShutdown) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.view()
	if a.now = v.Now; a.now.IsZero() {
		a.now = time.Now()
	}
	net := newNetwork(v)
	statuses := map[string]NodeStatus{}
	a.refused, a.fetchFailed = map[string]bool{}, map[string]string{}
	a.forgetGoneBuilders(v)
	a.playCertRenewals()
	var pending []*emulator.InstanceView
	for i := range v.Instances {
		in := &v.Instances[i]
		st := NodeStatus{InstanceID: in.ID, Status: in.Status}
		if name, ok := a.registered[in.ID]; ok {
			st = a.statuses[in.ID]
			st.Status, st.Node = in.Status, name
			var underWay bool
			if st.Shutdown, underWay = a.followShutdown(in, name, &shutdowns); underWay {
				// Its kubelet runs until its pods are terminated; followPower stops it after.
				st.Reason = "instance " + in.Status + ": the kubelet's graceful node shutdown is terminating its pods"
			} else if st.Reason = a.followPower(ctx, in, name); st.Reason == "" {
				st.Reason = a.notReady[in.ID]
			}
			if st.Reason == "" {
				st.Reason = a.certsLapsed(in.ID)
			}
			statuses[in.ID] = st
			continue
		}
		if in.Status != "Running" {
			st.Reason = "not Running: the node boots once the instance is Running"
			statuses[in.ID] = st
			continue
		}
		if in.UserData == "" {
			st.Reason = "no user data: the instance runs no node bootstrap"
			statuses[in.ID] = st
			continue
		}
		if b, ok := a.builderOf(in); ok {
			statuses[in.ID] = a.bake(net, in, b)
			continue
		}
		if a.kube == nil {
			st.Reason = "no Kubernetes API to register with (the emulator runs without --kubeconfig): only image builders are played"
			statuses[in.ID] = st
			continue
		}
		pe := a.planOf(in, v.Images)
		var fetch *fetchError
		if errors.As(pe.err, &fetch) {
			if a.statuses[in.ID].Reason != fetch.Error() {
				a.logf("nodeagent: %s does not register: %v", in.ID, fetch)
			}
			st.Reason, a.fetchFailed[in.ID] = fetch.Error(), fetch.console()
			statuses[in.ID] = st
			continue
		}
		if pe.err != nil {
			st.Reason = "user data: " + pe.err.Error()
			statuses[in.ID] = st
			continue
		}
		statuses[in.ID] = st
		pending = append(pending, in)
	}
	a.refreshTokens()
	a.playCertsUploads()
	a.playSnapshots()
	for _, in := range pending {
		if p := a.plans[in.ID].plan; p.Init {
			a.settle(ctx, in, p, a.initialise(net, in, p), statuses)
		}
	}
	for progress := true; progress; {
		progress = false
		for _, in := range pending {
			p := a.plans[in.ID].plan
			if p.Init || a.registered[in.ID] != "" {
				continue
			}
			if a.settle(ctx, in, p, a.join(net, in, p, p.Join), statuses) {
				progress = true
			}
		}
	}
	a.forgetGone(ctx, v)
	a.followEtcdPower(ctx, v)
	a.runCommands(ctx)
	a.statuses = statuses
	regions := make(map[string]string, len(v.Instances))
	for i := range v.Instances {
		regions[v.Instances[i].ID] = v.Instances[i].Region
	}
	a.writeConsoles(statuses, a.refused, regions)
	a.powerOffBaked()
	if c := a.cluster; c != nil && !a.addonsDone && a.registered[c.initID] != "" {
		a.addonsDone = true
		return c.initID, a.plans[c.initID].plan.Addons, shutdowns
	}
	return "", nil, shutdowns
}

// settle records a decision and registers the node when it has no reason not to. It reports
// whether the node registered.
func (a *Agent) settle(ctx context.Context, in *emulator.InstanceView, p NodePlan, d decision, statuses map[string]NodeStatus) bool {
	st := statuses[in.ID]
	st.Role, st.KubeletVersion = d.role, p.KubeletVersion
	if d.reason != "" {
		if a.statuses[in.ID].Reason != d.reason {
			a.logf("nodeagent: %s (%s) does not register: %s", in.ID, p.NodeName, d.reason)
		}
		st.Reason = d.reason
		statuses[in.ID] = st
		a.refused[in.ID] = true
		return false
	}
	node := nodeFor(in, p, d.role != RoleWorker, d.notReady, d.conditions)
	for id, name := range a.registered {
		if name == node.Name && id != in.ID {
			// kubeadm join's preflight refuses a name a Ready node already has.
			st.Reason = fmt.Sprintf("a Node with name %q and status Ready already exists in the cluster (instance %s): kubeadm refuses to join "+
				"a second node under the same name; the node name is the host name, so give every instance its own (RunInstances UniqueSuffix)", node.Name, id)
			statuses[in.ID] = st
			a.refused[in.ID] = true
			return false
		}
	}
	if d.role == RoleControlPlane {
		if why := a.joinRealEtcd(ctx, node.Name); why != "" {
			if a.statuses[in.ID].Reason != why {
				a.logf("nodeagent: %s (%s) does not register: %s", in.ID, node.Name, why)
			}
			st.Reason = why
			statuses[in.ID] = st
			a.refused[in.ID] = true
			return false
		}
	}
	if err := a.kube.RegisterNode(ctx, node); err != nil {
		st.Reason = "registering the node: " + err.Error()
		statuses[in.ID] = st
		return false
	}
	if d.role == RoleInit && a.etcd != nil {
		a.etcd.NameFirstEtcdMember(node.Name) // kubeadm init's member is the cluster's first
	}
	a.registered[in.ID] = node.Name
	a.holdShutdown(in.ID, p)
	a.issueCerts(in.ID, p, d.role != RoleWorker)
	if d.notReady != "" {
		a.notReady[in.ID] = d.notReady
	}
	if d.role == RoleControlPlane { // it serves the API from now on, and runs an etcd member
		a.cluster.members[in.ID] = in.PrivateIP
		a.cluster.addEtcdMember(node.Name, in.ID)
	}
	if d.role != RoleWorker {
		a.startRefresher(in.ID, p)
		a.startSnapshotTimer(in.ID, p)
	}
	// A node without a pod network registers, and says why it is NotReady.
	st.Node, st.Reason, st.Notes = node.Name, d.notReady, slices.Clone(d.notes)
	if note := a.certsNote(in.ID); note != "" {
		st.Notes = append(st.Notes, note)
	}
	st.PodsReachMetadata = p.PodsReachMetadata
	if p.PodsReachMetadata {
		st.Notes = append(st.Notes, podsReachMetadataNote)
	} else if d.role == RoleInit {
		st.Notes = append(st.Notes, blockedMetadataClients(p.Addons)...)
	}
	a.model(in, p, d, &st)
	statuses[in.ID] = st
	a.statuses[in.ID] = st
	a.logf("nodeagent: %s registered as node %s (%s)", in.ID, node.Name, d.role)
	if d.notReady != "" {
		a.logf("nodeagent: node %s stays NotReady: %s", node.Name, d.notReady)
	}
	a.logf("nodeagent: node %s: %s", node.Name, st.modelLine)
	return true
}

// model puts the node's modeled time to Ready in its status (boottime.go), with the autoscaler's
// note when it registers too late for it (provision.go).
func (a *Agent) model(in *emulator.InstanceView, p NodePlan, d decision, st *NodeStatus) {
	c := a.cluster
	if c == nil {
		return
	}
	m := modelBoot(in, p, d.role, c.images)
	st.ModeledRegisteredSeconds, st.Boot, st.modelLine = m.registered, m.steps, m.summary(d.notReady == "")
	if d.notReady == "" {
		st.ModeledReadySeconds = m.ready
	}
	if note := provisionNote(p, m, c.maxProvision); note != "" {
		st.Notes = append(st.Notes, note)
	}
}

// planOf reads an instance's bootstrap: once per distinct user data, then named after the
// instance's host name when its nodeRegistration names none, and with what its image holds
// (images are the custom images).
func (a *Agent) planOf(in *emulator.InstanceView, images []emulator.ImageView) planEntry {
	if pe, ok := a.plans[in.ID]; ok && pe.userData == in.UserData && pe.imageID == in.ImageID {
		return pe
	}
	pe, ok := a.decoded[in.UserData]
	if !ok {
		pe = planEntry{userData: in.UserData}
		ci, err := DecodeUserData(in.UserData)
		if err == nil && ci.Bundle != nil {
			// The bundle is the instance's to fetch, with its role, as the bucket is now: its
			// plan is kept for the instance alone, and a failed fetch is played again next round.
			if ci, err = a.fetchBundle(in, ci); err != nil {
				return planEntry{userData: in.UserData, err: err}
			}
		}
		if err == nil {
			pe.plan, err = PlanNode(ci, "")
		}
		pe.err = err
		if ci.Bundle == nil {
			a.decoded[in.UserData] = pe
		}
	}
	if pe.err == nil && pe.plan.NodeName == "" {
		pe.plan.NodeName = strings.ToLower(in.HostName)
	}
	pe.imageID = in.ImageID
	if pe.err == nil && in.ImageID != "" {
		pe.plan = pe.plan.fromImage(a.imageHoldsOf(images, in.ImageID))
	}
	a.plans[in.ID] = pe
	return pe
}

// imageHoldsOf is holdsOf, read once per image: an image never changes what it holds.
func (a *Agent) imageHoldsOf(images []emulator.ImageView, id string) imageHolds {
	h, ok := a.holds[id]
	if !ok {
		h = holdsOf(images, id)
		a.holds[id] = h
	}
	return h
}

// followPower stops a registered node's kubelet when its instance leaves Running (stopped,
// stopping, or starting again) or the API server refuses its expired client certificate, and
// starts it when the instance runs again, and says why the node is not Ready meanwhile; the first control-plane node applies its add-ons again when it boots
// again. A failed call is tried again next round.
func (a *Agent) followPower(ctx context.Context, in *emulator.InstanceView, name string) string {
	refused := a.kubeletRefused(in.ID, name) // its client certificate expired: down as well (certexpiry.go)
	down := in.Status != "Running" || refused != ""
	if !down && a.stopped[in.ID] && a.notReady[in.ID] != "" {
		// Its kubelet runs again but still has no pod network: the node stays NotReady, so it
		// is not handed back to kwok.
		delete(a.stopped, in.ID)
	}
	if down != a.stopped[in.ID] {
		if err := a.kube.SetKubeletRunning(ctx, name, !down); err != nil {
			a.logf("nodeagent: node %s of instance %s (%s): %v", name, in.ID, in.Status, err)
		} else if down {
			a.stopped[in.ID] = true
			a.logf("nodeagent: instance %s is %s: node %s goes NotReady", in.ID, in.Status, name)
		} else {
			delete(a.stopped, in.ID)
			a.logf("nodeagent: instance %s runs again: node %s comes back", in.ID, name)
			if c := a.cluster; c != nil && c.initID == in.ID {
				// gpucluster-addons.service runs on every boot: the add-ons are applied again,
				// and one deleted by hand meanwhile comes back.
				a.addonsDone = false
			}
		}
	}
	switch {
	case in.Status != "Running":
		return "instance " + in.Status + ": its kubelet posts no status, so the node is NotReady until the instance runs again"
	case refused != "":
		return refused
	}
	return ""
}

// forgetGone deletes the nodes of released instances, as the cloud's node controller does.
func (a *Agent) forgetGone(ctx context.Context, v emulator.View) {
	live := map[string]bool{}
	for _, in := range v.Instances {
		live[in.ID] = true
	}
	for id, name := range a.registered {
		if live[id] {
			continue
		}
		if err := a.checkReleased(ctx, id, name); err != nil {
			a.logf("nodeagent: pods of node %s of released instance %s: %v", name, id, err)
			continue
		}
		if err := a.kube.DeleteNode(ctx, name); err != nil {
			a.logf("nodeagent: deleting node %s of released instance %s: %v", name, id, err)
			continue
		}
		delete(a.registered, id)
		delete(a.shutDown, id)
		delete(a.stopped, id)
		delete(a.notReady, id)
		delete(a.plans, id)
		delete(a.certs, id)
		if c := a.cluster; c != nil {
			delete(c.members, id)
		}
	}
	used, usedImages := map[string]bool{}, map[string]bool{}
	for id, pe := range a.plans {
		if !live[id] {
			delete(a.plans, id)
			continue
		}
		used[pe.userData], usedImages[pe.imageID] = true, true
	}
	for id := range a.holds {
		if !usedImages[id] {
			delete(a.holds, id)
		}
	}
	for ud := range a.decoded {
		if !used[ud] {
			delete(a.decoded, ud)
		}
	}
}

// Statuses lists what the agent says of each instance, in instance id order.
func (a *Agent) Statuses() []NodeStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]NodeStatus, 0, len(a.statuses))
	for _, st := range a.statuses {
		out = append(out, st)
	}
	slices.SortFunc(out, func(x, y NodeStatus) int {
		if x.InstanceID < y.InstanceID {
			return -1
		}
		if x.InstanceID > y.InstanceID {
			return 1
		}
		return 0
	})
	return out
}

// ServeHTTP answers GET /_emulator/nodes: {"nodes": [NodeStatus...], "etcd_members": [EtcdMember...],
// "kubernetes_version": the cluster's kubeadm-config version (upgrade.go),
// "failures": [Failure...]}.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	body := map[string]any{"nodes": a.Statuses(), "etcd_members": a.EtcdMembers(), "failures": a.Failures(), "kubernetes_version": a.ClusterVersion()}
	if err := json.NewEncoder(w).Encode(body); err != nil {
		a.logf("nodeagent: answering %s: %v", r.URL.Path, fmt.Sprint(err))
	}
}
