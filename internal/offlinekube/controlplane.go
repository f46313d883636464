package offlinekube

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A cluster's control plane is one Kubernetes release: kube-apiserver, kube-controller-manager
// and kube-scheduler of one build. `make kube` builds two (scripts/build-kube.sh): the current
// minor into BinDir (tools/testkube) and the minor before it into BinDir/previous
// (tools/testkube-previous), so that a test can form a cluster on the older release and upgrade
// it to the newer one on real binaries. etcd and kwok are the same for both: kubeadm keeps the
// cluster's etcd through a minor upgrade (it changes only etcd's image, and only when the new
// minor's kubeadm pins a newer one), and kwok plays the kubelets, whose version the nodes report.

// PreviousDir is the directory under BinDir that holds the previous minor's control plane.
const PreviousDir = "previous"

// controlPlaneBinaries are the programs of one release's control plane.
var controlPlaneBinaries = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// ControlPlaneReleases maps each Kubernetes release ("v1.37.2") whose control plane binDir
// holds to its directory: binDir itself and binDir/PreviousDir when it has one. The release is
// what the binaries say of themselves (kube-apiserver --version), the version scripts/build-kube.sh
// stamped from their module.
func ControlPlaneReleases(binDir string) (map[string]string, error) {
	out := map[string]string{}
	for _, dir := range []string{binDir, filepath.Join(binDir, PreviousDir)} {
		complete := true
		for _, b := range controlPlaneBinaries {
			if info, err := os.Stat(filepath.Join(dir, b)); err != nil || info.IsDir() {
				complete = false
			}
		}
		if !complete {
			continue
		}
		raw, err := exec.Command(filepath.Join(dir, "kube-apiserver"), "--version").Output()
		if err != nil {
			return nil, fmt.Errorf("offlinekube: %s --version: %w", filepath.Join(dir, "kube-apiserver"), err)
		}
		// "Kubernetes v1.37.2"
		fields := strings.Fields(string(raw))
		if len(fields) != 2 || !strings.HasPrefix(fields[1], "v") {
			return nil, fmt.Errorf("offlinekube: %s --version said %q, want \"Kubernetes vX.Y.Z\"", filepath.Join(dir, "kube-apiserver"), raw)
		}
		out[fields[1]] = dir
	}
	return out, nil
}

// UpgradeReleases are the two releases of ControlPlaneReleases, the older first: what a
// minor-upgrade test forms its cluster on and upgrades it to. An error unless binDir holds
// exactly two, of consecutive minors (what `make kube` builds).
func UpgradeReleases(binDir string) (older, newer string, err error) {
	releases, err := ControlPlaneReleases(binDir)
	if err != nil {
		return "", "", err
	}
	minor := func(release string) uint { return version.MustParseGeneric(release).Minor() }
	ordered := slices.SortedFunc(maps.Keys(releases), func(a, b string) int { return cmp.Compare(minor(a), minor(b)) })
	if len(ordered) != 2 || minor(ordered[1]) != minor(ordered[0])+1 {
		return "", "", fmt.Errorf("offlinekube: control planes in %s: %v, want two of consecutive minors: run `make kube`", binDir, ordered)
	}
	return ordered[0], ordered[1], nil
}

// controlPlaneDir is the directory of release's control plane ("" = BinDir's own); the error
// names the releases there are and how to build them.
func controlPlaneDir(binDir, release string) (string, error) {
	if release == "" {
		return binDir, nil
	}
	releases, err := ControlPlaneReleases(binDir)
	if err != nil {
		return "", err
	}
	if dir, ok := releases[release]; ok {
		return dir, nil
	}
	return "", fmt.Errorf("offlinekube: no control plane of Kubernetes %s in %s (there are %v): run `make kube`, which builds tools/testkube into ./bin and tools/testkube-previous into ./bin/%s",
		release, binDir, slices.Sorted(maps.Keys(releases)), PreviousDir)
}

// controlPlane is the running control plane's processes and release.
type controlPlane struct {
	release                                 string // as the binaries report it, "v1.37.2"
	apiServer, controllerManager, scheduler *process
}

// ControlPlaneVersion is the release of the control plane's binaries ("v1.37.2"): what the API
// server's /version reports.
func (c *Cluster) ControlPlaneVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cp.release
}

// UpgradeControlPlane replaces the control plane with release's binaries, as kubeadm upgrade
// apply replaces a control-plane node's static pods (kube-apiserver first, then the controller
// manager and the scheduler: none may be newer than the API server,
// https://kubernetes.io/releases/version-skew-policy/#kube-controller-manager-kube-scheduler-and-cloud-controller-manager).
// The new API server starts beside the old one on the same etcd, as a kubeadm cluster's API
// servers of two releases do while its control-plane nodes are upgraded one at a time; the
// cluster's endpoint moves to it once it is ready and the old one stops, so the API answers
// throughout. The controller manager and the scheduler run as one instance each without leader
// election, so the old one stops before the new one starts. It does not judge whether the
// upgrade is allowed (kubeadm's rules are the node agent's, nodeagent/upgrade.go); it refuses
// only a release it has no binaries for. Upgrades are one at a time.
func (c *Cluster) UpgradeControlPlane(ctx context.Context, release string) error {
	c.upgradeMu.Lock()
	defer c.upgradeMu.Unlock()
	c.mu.Lock()
	cp, l, apiFront := c.cp, c.layout, c.apiFront
	c.mu.Unlock()
	if release == cp.release {
		return nil
	}
	dir, err := controlPlaneDir(c.binDir, release)
	if err != nil {
		return err
	}
	begin := time.Now()
	ports, err := pickPorts(1)
	if err != nil {
		return fmt.Errorf("offlinekube: a port for kube-apiserver %s: %w", release, err)
	}
	run := func(name string, args []string) (*process, error) {
		return c.run(name+"-"+release, filepath.Join(dir, name), l.logDir, args, nil)
	}
	apiServer, err := run("kube-apiserver", l.apiServerArgs(ports[0]))
	if err != nil {
		return err
	}
	backend := "127.0.0.1:" + strconv.Itoa(ports[0])
	cfg := rest.CopyConfig(c.restConfig)
	cfg.Host = "https://" + backend
	direct, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.retire(apiServer)
		return err
	}
	if err := waitFor(ctx, apiServer, 200*time.Millisecond, apiReady(direct)); err != nil {
		c.retire(apiServer)
		return err
	}
	apiFront.setBackend(backend)
	c.retire(cp.apiServer)
	c.logf("offlinekube: kube-apiserver %s serves the cluster on %s behind %s; %s stopped (%s)", release, backend, l.apiURL, cp.release, time.Since(begin).Round(time.Millisecond))

	c.retire(cp.controllerManager)
	controllerManager, err := run("kube-controller-manager", l.controllerManagerArgs())
	if err != nil {
		return err
	}
	c.retire(cp.scheduler)
	scheduler, err := run("kube-scheduler", l.schedulerArgs())
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cp = controlPlane{release: release, apiServer: apiServer, controllerManager: controllerManager, scheduler: scheduler}
	c.mu.Unlock()
	c.logf("offlinekube: control plane upgraded %s -> %s (%s)", cp.release, release, time.Since(begin).Round(time.Millisecond))
	return nil
}

// retire stops p and forgets it (Stop has nothing left to stop of it).
func (c *Cluster) retire(p *process) {
	if p == nil {
		return
	}
	p.stop(stopGrace)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.processes = slices.DeleteFunc(c.processes, func(q *process) bool { return q == p })
}
