package nodeagent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Kubernetes minor upgrades (issue #34). The versions here are the ones the nodes' bootstraps
// install and kubeadm records, judged by kubeadm's and the version skew policy's rules. The
// offline cluster runs one control plane (kube-apiserver, kube-controller-manager,
// kube-scheduler) standing for every control-plane node's static pods, of one real release:
// a test forms its cluster on the release its nodes install when the offline cluster has its
// binaries (v1.36 and v1.37: tools/testkube-previous, tools/testkube), and kubeadm upgrade
// apply, once kubeadm's rules let it, replaces that control plane with the target's real
// binaries (UpgradeControlPlaneWith: offlinekube's UpgradeControlPlane) before it reports
// success, as the command on the node returns once the node's new static pods are up
// (app/phases/upgrade/staticpods.go, upgradeComponent waits for each). A test of other
// releases runs on the current one's control plane whatever its nodes install, and its upgrade
// changes kubeadm-config's version only.
//
// What is modeled, and from which upstream fact (kubernetes v1.33, cmd/kubeadm):
//   - the cluster's version is ClusterConfiguration.kubernetesVersion in the kubeadm-config
//     ConfigMap: kubeadm init writes it; kubeadm upgrade apply rewrites it
//     (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/);
//   - a node's kubelet and kubeadm are the release its bootstrap pins (kubelet=X-1.1, one pin
//     for kubelet, kubeadm and kubectl: internal/bootstrap nodephases.go);
//   - kubeadm join --control-plane runs the init preflight checks against the cluster's
//     version (RunInitNodeChecks), whose KubeletVersionCheck fails a kubelet of a newer minor
//     ("[ERROR KubeletVersion]: the kubelet version is higher than the control plane version",
//     app/preflight/checks.go); a worker's join runs it without a version, so a newer worker
//     joins, outside the skew policy (a kubelet must not be newer than kube-apiserver,
//     https://kubernetes.io/releases/version-skew-policy/#kubelet): noted, not refused;
//   - kubeadm upgrade apply refuses a target more than one minor above the cluster's ("kubeadm
//     can upgrade only 1 minor version at a time"), below it, or above its own kubeadm
//     (EnforceVersionPolicies, app/phases/upgrade/policy.go), and a cluster whose control-plane
//     nodes are not all Ready (CheckClusterHealth, app/phases/upgrade/health.go); the etcd
//     members must all answer, since it rewrites the etcd manifest and waits for the member
//     (app/phases/upgrade/staticpods.go, performEtcdStaticPodUpgrade);
//   - apt finds a release only in its own minor's repository on pkgs.k8s.io
//     (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/change-package-repository/).

var (
	kubeletPinRE = regexp.MustCompile(`\bkubelet=([0-9]+\.[0-9]+\.[0-9]+)-`)
	// The upgrade script (bootstrap.KubeadmUpgradeScript).
	upgradeApplyRE  = regexp.MustCompile(`(?m)^kubeadm upgrade apply "?\$target"? --yes$`)
	upgradeTargetRE = regexp.MustCompile(`(?m)^target=(v[0-9]+\.[0-9]+\.[0-9]+)$`)
	kubeadmPinRE    = regexp.MustCompile(`\bkubeadm=([0-9]+\.[0-9]+\.[0-9]+)-`)
	k8sRepoMinorRE  = regexp.MustCompile(`(?m)^echo 'deb .*/(v[0-9]+\.[0-9]+)/deb/ /' > /etc/apt/sources\.list\.d/kubernetes\.list$`)
)

// kubeletVersionOf is the kubelet release ("1.33.6") the bootstrap script installs; "" when it
// pins none.
func kubeletVersionOf(script string) string {
	if m := kubeletPinRE.FindStringSubmatch(script); m != nil {
		return m[1]
	}
	return ""
}

// minorOf is 33 for "v1.33.6", "1.33" or "v1.33"; false for anything else.
func minorOf(v string) (int, bool) {
	pv, err := version.ParseGeneric(v)
	if err != nil || pv.Major() != 1 {
		return 0, false
	}
	return int(pv.Minor()), true
}

// newerMinor reports whether kubelet's minor is above the cluster's; unknown versions are not.
func newerMinor(kubelet, cluster string) bool {
	k, ok1 := minorOf(kubelet)
	c, ok2 := minorOf(cluster)
	return ok1 && ok2 && k > c
}

// versionRefusesJoin is why kubeadm join --control-plane of a node whose kubelet is
// kubeletVersion fails on a cluster at clusterVersion ("" = it does not); unknown versions pass.
func versionRefusesJoin(kubeletVersion, clusterVersion string) string {
	if !newerMinor(kubeletVersion, clusterVersion) {
		return ""
	}
	return fmt.Sprintf("kubeadm join --control-plane fails its preflight: [ERROR KubeletVersion]: the kubelet version is higher than the control plane version. "+
		"Kubelet version: %q Control plane version: %q (kubeadm-config's kubernetesVersion). Raise the cluster's version first: kubeadm upgrade apply %s "+
		"on a running control-plane node, one minor at a time (the provider does it through Cloud Assistant before it replaces a control-plane node; "+
		"https://kubernetes.io/releases/version-skew-policy/)", kubeletVersion, strings.TrimPrefix(clusterVersion, "v"), "v"+kubeletVersion)
}

// newerWorkerNote is the note on a worker whose kubelet is newer than the cluster's version:
// kubeadm lets it join, the skew policy does not support it. "" when it is not newer.
func newerWorkerNote(kubeletVersion, clusterVersion string) string {
	if !newerMinor(kubeletVersion, clusterVersion) {
		return ""
	}
	return fmt.Sprintf("kubelet v%s is newer than the control plane's %s: outside the version skew policy (a kubelet must not be newer than kube-apiserver, "+
		"https://kubernetes.io/releases/version-skew-policy/#kubelet); upgrade the control plane before the workers", kubeletVersion, clusterVersion)
}

// ClusterVersion is the cluster's Kubernetes version as kubeadm-config records it ("v1.33.6");
// "" before a cluster exists or when its init node named none.
func (a *Agent) ClusterVersion() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cluster == nil {
		return ""
	}
	return a.cluster.images.version
}

// commandUnderWay is the exit code of a command that finishes on a goroutine of its own: an
// upgrade whose control plane is being replaced (startUpgrades), a removal of real etcd members
// (startEtcdRemovals).
const commandUnderWay = -1

// putUnderWay records invokeID as finishing on its own goroutine. Caller holds a.mu.
func (a *Agent) putUnderWay(invokeID string) {
	if a.underWay == nil {
		a.underWay = map[string]bool{}
	}
	a.underWay[invokeID] = true
}

// controlPlaneUpgrade is a kubeadm upgrade apply accepted this round: invocation invokeID on
// instance id, the cluster from its version to target.
type controlPlaneUpgrade struct {
	invokeID, id, from, target string
}

// UpgradeControlPlaneWith gives the agent the offline cluster's control plane to replace when a
// kubeadm upgrade apply is allowed (such as offlinekube.Cluster.UpgradeControlPlane; it may take
// tens of seconds and runs outside the agent's lock). Call it before Run. Without it the upgrade
// changes kubeadm-config's version only.
func (a *Agent) UpgradeControlPlaneWith(upgrade func(ctx context.Context, release string) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.upgradeControlPlane = upgrade
}

// startUpgrades plays each upgrade this round accepted on its own goroutine: the control plane is
// replaced with the target's binaries, then kubeadm-config records the target and the command
// finishes with kubeadm's success; a control plane that does not come up fails the command and
// leaves the version as it was.
func (a *Agent) startUpgrades(ctx context.Context) {
	a.mu.Lock()
	due, upgrade := a.upgradesDue, a.upgradeControlPlane
	a.upgradesDue = nil
	a.mu.Unlock()
	for _, u := range due {
		var err error
		a.finishInBackground(u.invokeID, u.id, func() { err = upgrade(ctx, u.target) }, func() (int, string) {
			if err != nil {
				a.logf("nodeagent: %s: kubeadm upgrade apply %s failed: the control plane did not come up: %v", u.id, u.target, err)
				return 1, fmt.Sprintf("[upgrade/apply] FATAL: couldn't upgrade control plane to %s: the static pods did not come up: %v\n", u.target, err)
			}
			a.recordUpgrade(u.id, u.from, u.target)
			return 0, upgradeSucceeded(u.from, u.target)
		})
	}
}

// finishInBackground runs work on a goroutine of its own, then, under the agent's lock, settles
// what it did and finishes the command (invocation invokeID on instance id, put under way) with
// the exit code and output settle answers.
func (a *Agent) finishInBackground(invokeID, id string, work func(), settle func() (code int, output string)) {
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		work()
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.underWay, invokeID)
		code, output := settle()
		a.finishCommand(invokeID, id, code, output)
	}()
}

// recordUpgrade is kubeadm-config's version after an upgrade apply. Caller holds a.mu.
func (a *Agent) recordUpgrade(id, from, target string) {
	a.logf("nodeagent: %s ran kubeadm upgrade apply: the cluster's kubernetesVersion %s -> %s", id, from, target)
	if a.cluster != nil {
		a.cluster.images.version = target
	}
}

func upgradeSucceeded(from, target string) string {
	return fmt.Sprintf("[upgrade] SUCCESS! A control plane node of your cluster was upgraded to %q.\ncluster upgraded from %s to %s\n", target, from, target)
}

// runKubeadmUpgrade plays bootstrap.KubeadmUpgradeScript, invocation invokeID on instance id: its
// exit code and output, or commandUnderWay when the control plane is being replaced
// (startUpgrades finishes it). handled is false for a script that is not one.
func (a *Agent) runKubeadmUpgrade(invokeID, id, script string) (exitCode int, output string, handled bool) {
	tm := upgradeTargetRE.FindStringSubmatch(script)
	if tm == nil || !upgradeApplyRE.MatchString(script) {
		return 0, "", false
	}
	target := tm[1]
	c := a.cluster
	if c == nil || c.members[id] == "" || a.stopped[id] {
		return 1, "The connection to the server localhost:8080 was refused: /etc/kubernetes/admin.conf is on control-plane nodes only; " +
			"run the command on a running control-plane node of the cluster\n", true
	}
	current := c.images.version
	if current == target {
		return 0, "cluster already at " + target + "\n", true
	}
	kubeadm := ""
	if m := kubeadmPinRE.FindStringSubmatch(script); m != nil {
		kubeadm = "v" + m[1]
	}
	if m := k8sRepoMinorRE.FindStringSubmatch(script); m == nil || !strings.HasPrefix(kubeadm+".", m[1]+".") {
		repo := "none"
		if m != nil {
			repo = m[1]
		}
		return 100, fmt.Sprintf("E: Version '%s-1.1' for 'kubeadm' was not found (the Kubernetes apt repository is %s's; pkgs.k8s.io serves each minor's releases "+
			"from that minor's repository only)\n", strings.TrimPrefix(kubeadm, "v"), repo), true
	}
	t, _ := minorOf(target)
	cur, _ := minorOf(current)
	switch {
	case olderRelease(kubeadm, target):
		return 1, fmt.Sprintf("[upgrade/version] FATAL: Specified version to upgrade to %q is higher than the kubeadm version %q. Upgrade kubeadm first\n", target, kubeadm), true
	case t > cur+1:
		return 1, fmt.Sprintf("[upgrade/version] FATAL: Specified version to upgrade to %q is too high; kubeadm can upgrade only 1 minor version at a time "+
			"(the cluster is at %s)\n", target, current), true
	case t < cur:
		return 1, fmt.Sprintf("[upgrade/version] FATAL: Specified version to upgrade to %q is lower than the cluster version %q. Downgrades are not supported\n", target, current), true
	}
	if down := a.controlPlaneNotReady(); len(down) > 0 {
		return 1, fmt.Sprintf("[upgrade/health] FATAL: there are NotReady control-planes in the cluster: %v; their etcd members must answer too. "+
			"Nothing was upgraded\n", down), true
	}
	if a.upgradeControlPlane != nil {
		a.putUnderWay(invokeID)
		a.upgradesDue = append(a.upgradesDue, controlPlaneUpgrade{invokeID: invokeID, id: id, from: current, target: target})
		return commandUnderWay, "", true
	}
	a.recordUpgrade(id, current, target)
	return 0, upgradeSucceeded(current, target), true
}

// olderRelease reports whether release a ("v1.34.1") is older than b; unreadable ones are not.
func olderRelease(a, b string) bool {
	va, err1 := version.ParseGeneric(a)
	vb, err2 := version.ParseGeneric(b)
	return err1 == nil && err2 == nil && va.LessThan(vb)
}

// controlPlaneNotReady names the control-plane nodes whose kubelet is down or whose etcd member
// does not answer. Caller holds a.mu.
func (a *Agent) controlPlaneNotReady() []string {
	var down []string
	for _, m := range a.cluster.etcdMembers(a.view()) {
		if !m.Connected || a.stopped[m.InstanceID] || a.registered[m.InstanceID] == "" {
			down = append(down, m.Name)
		}
	}
	slices.Sort(down)
	return down
}
