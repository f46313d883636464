package nodeagent

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The control-plane certificates kubeadm init --upload-certs stores in the kubeadm-certs Secret
// (issue #31): "The kubeadm-certs Secret and decryption key expire after two hours"
// (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-init/#uploading-control-plane-certificates-to-the-cluster),
// so a control-plane join more than two hours after the last upload fails to download them. A
// timer may upload them again (kubeadm init phase upload-certs --upload-certs): the first node's
// hourly timer on every run; bootstrap's conditional one (uploadcerts.go), on every
// control-plane node, only while fewer control-plane Nodes are Ready than the control plane's
// size, otherwise deleting the Secret (a deleted Secret is no upload at all). The agent plays the
// timer's runs from the files the nodes carry: its period (OnUnitActiveSec) and the size its
// script compares with, never what the files mean to do.

// certsLifetime is how long the kubeadm-certs Secret and its key live after an upload.
const certsLifetime = 2 * time.Hour

// CertsUploader is a control-plane node's certificate upload timer, read from its files: its
// period, and the control plane's size its script compares with (0: it uploads on every run).
type CertsUploader struct {
	Period time.Duration
	Size   int
}

var controlPlaneSizeRE = regexp.MustCompile(`(?m)^control_plane_size=(\d+)$`)

// certsUploader reads the upload timer: a unit that runs kubeadm init phase upload-certs
// --upload-certs itself (the first node's hourly timer), or whose ExecStart script does under a
// control_plane_size condition, with a timer the bootstrap enables. nil: none.
func certsUploader(files map[string]string, script string) *CertsUploader {
	for _, t := range enabledTimers(files, script) {
		if t.period <= 0 {
			continue
		}
		if strings.Contains(t.exec, "upload-certs --upload-certs") {
			return &CertsUploader{Period: t.period}
		}
		if m := controlPlaneSizeRE.FindStringSubmatch(t.body); m != nil && strings.Contains(t.body, "upload-certs --upload-certs") {
			size, _ := strconv.Atoi(m[1])
			return &CertsUploader{Period: t.period, Size: size}
		}
	}
	return nil
}

// certsState is the kubeadm-certs Secret: kubeadm init uploads it when the cluster forms; the
// first node's upload timer (uploader; Period 0: none) uploads or deletes it after.
type certsState struct {
	uploader CertsUploader
	uploaded time.Time // the last upload; zero: the Secret was deleted (the control plane was full)
	ticks    int64
	full     string // why the last run deleted the Secret
}

// readyControlPlane counts the registered control-plane nodes whose kubelet runs. Caller holds a.mu.
func (a *Agent) readyControlPlane() (ready int, withTimer bool) {
	for id := range a.registered {
		p := a.plans[id].plan
		if !p.Init && (p.Join == nil || !p.Join.ControlPlane) || a.stopped[id] || a.notReady[id] != "" {
			continue
		}
		ready++
		withTimer = withTimer || p.CertsUploader != nil
	}
	return ready, withTimer
}

// playCertsUploads plays the timer's runs up to now, each judging the control plane as it is
// when the agent plays it: fewer Ready control-plane nodes than the size upload the
// certificates, a full control plane deletes them. Only a control-plane node in the cluster runs
// the timer.
func (a *Agent) playCertsUploads() {
	c := a.cluster
	if c == nil || c.certs.uploader.Period <= 0 {
		return
	}
	s := &c.certs
	tick := int64(a.now.Sub(c.formed) / s.uploader.Period)
	if tick <= s.ticks {
		return
	}
	ready, running := a.readyControlPlane()
	if !running {
		return // nobody runs the timer: the last upload ages as it is
	}
	s.ticks = tick
	at := c.formed.Add(time.Duration(tick) * s.uploader.Period)
	if s.uploader.Size == 0 || ready < s.uploader.Size {
		s.uploaded, s.full = at, ""
		return
	}
	if !s.uploaded.IsZero() {
		a.logf("nodeagent: the control plane is full (%d of %d control-plane nodes Ready): the upload timer deleted the kubeadm-certs Secret", ready, s.uploader.Size)
	}
	s.uploaded = time.Time{}
	s.full = fmt.Sprintf("the control plane was full at %s (%d of %d control-plane nodes Ready), so the upload timer deleted the kubeadm-certs Secret",
		at.UTC().Format(time.RFC3339), ready, s.uploader.Size)
}

// certsVerdict is why kubeadm join --control-plane cannot download the certificates at now, ""
// when it can.
func (c *cluster) certsVerdict(now time.Time) string {
	s := &c.certs
	if s.uploaded.IsZero() {
		return "kubeadm join --control-plane fails to download the certificates: no kubeadm-certs Secret (" + s.full +
			"); a control-plane node that replaces a lost one finds them after the timer's next run, within " + s.uploader.Period.String()
	}
	if now.Sub(s.uploaded) < certsLifetime {
		return ""
	}
	hint := "; upload them again with kubeadm init phase upload-certs --upload-certs while a control-plane join is pending"
	if s.uploader.Period > 0 {
		hint = ", and no control-plane node's upload timer has run since"
	}
	return fmt.Sprintf("kubeadm join --control-plane fails to download the certificates: the kubeadm-certs Secret %s uploaded at %s expired two hours later "+
		"(kubeadm deletes it with its key)%s", c.initID, s.uploaded.UTC().Format(time.RFC3339), hint)
}

// CertsVerdict reports whether a control-plane join could download the certificates now: ""
// when it could, otherwise why not (no cluster yet: "no cluster").
func (a *Agent) CertsVerdict() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cluster == nil {
		return "no cluster"
	}
	return a.cluster.certsVerdict(a.now)
}
