package nodeagent

import (
	"regexp"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/regionreach"
)

// Image builders (internal/bootstrap's bake.go, internal/nodeimage): an instance whose bootstrap
// script is a builder's runs the install phases, pulls the node images into containerd, seals
// itself and powers off. The agent plays that guest as it plays a node's: the builder fetches
// what its script fetches, from the instance's region and over its route, and fails, naming the
// cause, where a node would (a blocked or unreliable host, a download with no route, an image no
// host it would contact can serve). A builder that can fetch everything prints its phases ok and
// "baked" on its serial console and powers itself off (Server.PowerOffFromGuest); one that cannot
// prints the phase that failed, after its last attempt, and keeps running (its unit retries).

// RoleBuilder is the role an image builder's status carries.
const RoleBuilder = "image-builder"

// builderMark is in the first line of a builder's script (renderScriptEnding's role).
const builderMark = "gpucluster node bootstrap, role image builder."

// prePullRE finds the images phase's pulls: ctr -n k8s.io images pull --hosts-dir <dir> '<ref>'.
var prePullRE = regexp.MustCompile(`ctr -n k8s\.io images pull --hosts-dir \S+ '([^']+)'`)

// builderPlan is what an image builder does, read from its user data.
type builderPlan struct {
	plan   NodePlan // Downloads, Containerd, Phases, Attempts
	images []string // what the images phase pulls
}

// planBuilder reads a builder's plan from its cloud-init; ok is false for any other instance.
func planBuilder(ci CloudInit) (builderPlan, bool) {
	script, ok := ci.Files[bootstrap.ScriptPath]
	if !ok || !strings.Contains(firstLine(script), builderMark) {
		return builderPlan{}, false
	}
	var b builderPlan
	b.plan.Downloads = downloadsOf(script, "")
	b.plan.Phases, b.plan.Attempts = scriptPhases(script)
	b.plan.Containerd = readContainerd(ci.Files, script)
	for _, m := range prePullRE.FindAllStringSubmatch(script, -1) {
		b.images = append(b.images, m[1])
	}
	// kubeadm's control-plane images (image.go, kubeadmPullRE), judged by kube-apiserver's.
	b.images = append(b.images, kubeadmPulls(script)...)
	return b, true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimPrefix(s, "#!/bin/bash\n"), "\n")
	return line
}

// judgeBuilder says why a builder cannot bake ("" when it can): the route for what needs the
// internet, the region for every host it fetches from, its registry mirrors for every image.
func judgeBuilder(net *network, in *emulator.InstanceView, b builderPlan) string {
	if why := net.checkDownloads(in, routed(b.plan.Downloads)); why != "" {
		return why
	}
	route := net.internetRoute(in) == ""
	var fatal causes
	for _, d := range routed(b.plan.Downloads) {
		if h, ok := regionreach.Filtered(in.Region, d.Host); ok {
			fatal.add(h.Describe(d.Host, in.Region), "downloading "+d.What)
		}
	}
	for _, ref := range b.images {
		if why := unpullable(in.Region, b.plan.Containerd, ref, route); why != "" {
			fatal.add(why, "pulling "+ref+" (pre-pulled into the image)")
		}
	}
	if len(fatal.why) == 0 {
		return ""
	}
	return "the image builder cannot fetch what it needs from " + in.Region + ": " + fatal.String()
}

// builderConsole is what the builder prints: its phases ok then baked, or ok up to the phase
// its failure belongs to (a pre-pull's to the images phase) and that phase failed.
func builderConsole(b builderPlan, reason, region string) string {
	if reason == "" {
		out := consoleOf(b.plan, RoleBuilder, "", region)
		return strings.TrimSuffix(out, bootstrap.ConsolePrefix+bootstrap.StateJoined+"\n") + bootstrap.ConsolePrefix + bootstrap.StateBaked + "\n"
	}
	if strings.Contains(reason, "(pre-pulled into the image)") && !strings.Contains(reason, "downloading ") {
		// Only pulls failed: the install phases passed, the images phase did not.
		p := b.plan
		p.Downloads = nil
		for i, ph := range p.Phases {
			if ph.name == bootstrap.PhaseImages {
				p.Phases = p.Phases[:i+1]
				break
			}
		}
		return consoleOf(p, RoleInit, reason, region) // the last phase is the one the failure belongs to
	}
	return consoleOf(b.plan, RoleBuilder, reason, region)
}

// PowerOffWith makes the agent power image builders off with off (such as the emulator's
// Server.PowerOffFromGuest) once they have baked. Call it before Run.
func (a *Agent) PowerOffWith(off func(instanceID string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.powerOff = off
}

// builderOf reads an instance's user data as an image builder's (cached by user data).
func (a *Agent) builderOf(in *emulator.InstanceView) (builderPlan, bool) {
	if b, ok := a.builderPlans[in.UserData]; ok {
		return b, b.plan.Phases != nil
	}
	ci, err := DecodeUserData(in.UserData)
	var b builderPlan
	if err == nil {
		b, _ = planBuilder(ci)
	}
	if a.builderPlans == nil {
		a.builderPlans = map[string]builderPlan{}
	}
	a.builderPlans[in.UserData] = b
	return b, b.plan.Phases != nil
}

// bake judges a Running builder (with a.mu held): baked, its console says so and it powers off;
// refused, its console says where and why, and it keeps running.
func (a *Agent) bake(net *network, in *emulator.InstanceView, b builderPlan) NodeStatus {
	st := NodeStatus{InstanceID: in.ID, Status: in.Status, Role: RoleBuilder}
	st.Reason = judgeBuilder(net, in, b)
	if a.builders == nil {
		a.builders = map[string]string{}
	}
	a.builders[in.ID] = builderConsole(b, st.Reason, in.Region)
	if st.Reason == "" && a.powerOff != nil {
		a.logf("nodeagent: image builder %s baked; powering off", in.ID)
		a.pendingPowerOff = append(a.pendingPowerOff, in.ID)
	}
	return st
}

// powerOffBaked powers the builders that baked this round off, after writeConsoles wrote their
// consoles: the console says baked before the instance stops, as on the cloud.
func (a *Agent) powerOffBaked() {
	for _, id := range a.pendingPowerOff {
		a.powerOff(id)
	}
	a.pendingPowerOff = nil
}

// forgetGoneBuilders drops the consoles of builders that no longer exist.
func (a *Agent) forgetGoneBuilders(v emulator.View) {
	live := make(map[string]bool, len(v.Instances))
	for i := range v.Instances {
		live[v.Instances[i].ID] = true
	}
	for id := range a.builders {
		if !live[id] {
			delete(a.builders, id)
		}
	}
}
