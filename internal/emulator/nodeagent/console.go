package nodeagent

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/regionreach"
)

// The agent writes each instance's serial console as the node's bootstrap would
// (internal/bootstrap: the script reports bootstrap.ConsolePrefix lines to /dev/console, which
// ECS GetInstanceConsoleOutput returns), so that a test or the provider reads "joined" or
// "failed at phase X" through the vendor's API offline, as on the cloud:
//   - a node that registers (Ready or not: NotReady is the pod network, after the bootstrap
//     ended) prints "phase <p> ok" for every phase of its script, in order, then "joined";
//   - a node the agent refuses prints "phase <p> ok" for the phases before the one its failure
//     belongs to, then "phase <p> failed (attempt n/n): <reason>", the last attempt of that
//     phase (the agent judges the end state; it does not play the retries and their waits);
//   - an instance that is not Running, has no user data or no gpucluster bootstrap prints no
//     bootstrap line.
//
// The phase a refusal belongs to (failedPhase): a download the reason names (its host, unless the
// host is one the region always reaches, such as the in-VPC mirror, which a refusal may name in
// its fix but never as its cause) belongs to the first phase whose function fetches from that host (pkgs.k8s.io: kubelet; nvidia's
// servers: driver, fabric-manager or container-runtime, as the script has it); everything else
// the agent checks happens in kubeadm (the images kubeadm pulls, the join endpoint, the security
// groups, the token, the CA hash, the certificate key, a second init): the script's init or join
// phase.

// scriptPhase is one phase of the bootstrap script: its name and its function's body; held when
// the node's image holds it (image.go): the script skips it without a word on the console.
type scriptPhase struct {
	name, body string
	held       bool
}

var (
	// The script calls the phases in order, one "phase <name>" line each (bootstrap.renderScript);
	// each phase is a function p_<name with _ for -> whose body ends at a "}" line of its own.
	phaseCallRE = regexp.MustCompile(`(?m)^phase ([a-z][a-z-]*)$`)
	phaseFuncRE = regexp.MustCompile(`(?ms)^p_([a-z_]+)\(\) \{\n(.*?)^\}$`)
	attemptsRE  = regexp.MustCompile(`ATTEMPTS=\$\{GPUCLUSTER_ATTEMPTS:-(\d+)\}`)
)

// scriptPhases reads the phases of a bootstrap script in the order it runs them, and how many
// times it tries each (0 when the script does not say).
func scriptPhases(script string) ([]scriptPhase, int) {
	bodies := map[string]string{}
	for _, m := range phaseFuncRE.FindAllStringSubmatch(script, -1) {
		bodies[m[1]] = m[2]
	}
	var out []scriptPhase
	for _, m := range phaseCallRE.FindAllStringSubmatch(script, -1) {
		out = append(out, scriptPhase{name: m[1], body: bodies[strings.ReplaceAll(m[1], "-", "_")]})
	}
	attempts := 0
	if m := attemptsRE.FindStringSubmatch(script); m != nil {
		attempts, _ = strconv.Atoi(m[1])
	}
	return out, attempts
}

// failedPhase is the phase of p's script a refusal's reason belongs to (see the top of the file);
// role is the decision's (RoleInit runs the init phase), region the instance's.
func failedPhase(p NodePlan, role, reason, region string) string {
	p.Phases = slices.DeleteFunc(slices.Clone(p.Phases), func(ph scriptPhase) bool { return ph.held }) // skipped: they cannot fail
	for _, ph := range p.Phases {
		for _, d := range p.Downloads {
			if !d.Image && d.Host != "" && !regionreach.InRegion(region, d.Host) && strings.Contains(reason, d.Host) && strings.Contains(ph.body, d.Host) {
				return ph.name
			}
		}
	}
	kubeadm := ""
	for _, ph := range p.Phases {
		switch ph.name {
		case bootstrap.PhaseInit:
			if role == RoleInit || kubeadm == "" {
				kubeadm = ph.name
			}
		case bootstrap.PhaseJoin:
			if role != RoleInit || kubeadm == "" {
				kubeadm = ph.name
			}
		}
	}
	if kubeadm == "" && len(p.Phases) > 0 {
		kubeadm = p.Phases[len(p.Phases)-1].name
	}
	return kubeadm
}

// consoleOf is what the bootstrap of a node with plan p in region prints on its console: joined
// when reason is "", else failed at the phase the reason belongs to.
func consoleOf(p NodePlan, role, reason, region string) string {
	if len(p.Phases) == 0 {
		return ""
	}
	var b strings.Builder
	failed := ""
	if reason != "" {
		failed = failedPhase(p, role, reason, region)
	}
	for _, ph := range p.Phases {
		if ph.held {
			continue // the marker says done: the script returns before it reports anything
		}
		if ph.name == failed {
			n := strconv.Itoa(p.Attempts)
			// One line, as the console shows it; the reason never says "next in", which
			// bootstrap.ParseConsole takes for a retry.
			b.WriteString(bootstrap.ConsolePrefix + "phase " + ph.name + " failed (attempt " + n + "/" + n + "): " +
				strings.Join(strings.Fields(reason), " ") + "\n")
			return b.String()
		}
		b.WriteString(bootstrap.ConsolePrefix + "phase " + ph.name + " ok\n")
	}
	return b.String() + bootstrap.ConsolePrefix + bootstrap.StateJoined + "\n"
}

// modelPrefix starts the line the agent adds to a registered node's console after the
// bootstrap's own: the modeled time to Ready (boottime.go). It is the emulator's, not the node's,
// and says so; bootstrap.ParseConsole reads only ConsolePrefix lines and passes over it.
const modelPrefix = "gpucluster emulator (node agent): "

func modelConsoleLine(st NodeStatus) string {
	if st.modelLine == "" {
		return ""
	}
	return modelPrefix + st.modelLine + "\n"
}

// WriteConsoles makes the agent write each instance's serial console with write (such as the
// emulator's Server.SetConsoleOutput) whenever it changes; "" empties it. Call it before Run.
func (a *Agent) WriteConsoles(write func(instanceID, output string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writeConsole = write
}

// writeConsoles writes the consoles that changed in a round (with a.mu held): registered nodes
// joined, refused ones failed at their phase (settle recorded them in refused), the others
// nothing. regions are the instances' regions by id.
func (a *Agent) writeConsoles(statuses map[string]NodeStatus, refused map[string]bool, regions map[string]string) {
	if a.writeConsole == nil {
		return
	}
	now := map[string]string{}
	for id, st := range statuses {
		p := a.plans[id].plan
		switch {
		case a.registered[id] != "":
			now[id] = consoleOf(p, st.Role, "", regions[id]) + modelConsoleLine(st)
		case refused[id]:
			now[id] = consoleOf(p, st.Role, st.Reason, regions[id])
		case a.fetchFailed[id] != "":
			now[id] = a.fetchFailed[id] // the fetch script's last line: the bootstrap never started
		}
	}
	for id, text := range a.builders { // image builders' (builder.go)
		now[id] = text
	}
	for id, text := range now {
		if a.consoles[id] != text {
			a.writeConsole(id, text)
		}
	}
	for id := range a.consoles {
		if _, ok := now[id]; !ok {
			a.writeConsole(id, "")
		}
	}
	a.consoles = now
}
