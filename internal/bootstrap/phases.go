package bootstrap

// The node's boot path: cloud-init only writes the files and starts gpucluster-bootstrap.service,
// a systemd unit that runs the bootstrap script. The script runs the node's phases in order. Each
// phase runs in a bash of its own with errexit (a failing command fails the phase), is tried up to
// phaseAttempts times with doubling waits, and once it succeeds leaves a marker
// (/var/lib/gpucluster/phase-<name>.done) so that it never runs again: after a reboot, or when
// the unit restarts the script after a phase failed for good, the script resumes at the first
// phase without a marker. The marker holds a digest of the phase's function (bash's own
// `declare -f`), and a phase is skipped only when its marker holds its digest: a node booted from
// a baked image (bake.go), whose builder ran the same install phases, skips exactly those whose
// commands, versions and sources are the ones it would run, and runs any that differ. The unit restarts the script (Restart=on-failure) until it succeeds, so
// a mirror or the API server that answers only later does not leave a half-built node for good.
//
// What happens is readable from outside the node in three places:
//   - LogPath, the whole output of every phase, and a line with ERROR for each failed attempt
//     (the cluster-health alert NodeBootstrapLogErrors counts those lines, internal/alerting);
//   - StatusPath, one line "state=<state> phase=<phase> attempt=<n>/<max> time=<UTC>" (ParseStatus),
//     state running, retrying, failed or joined;
//   - the serial console, where the script writes ConsolePrefix lines: "gpucluster-bootstrap:
//     phase <phase> ok", "... phase <phase> failed (attempt n/max)", "... joined". ECS returns the
//     serial console's recent output with GetInstanceConsoleOutput
//     (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-getinstanceconsoleoutput),
//     so an operator (or a tool) holding only API credentials sees that a node failed and at which
//     phase without logging in. The console was chosen over an instance tag because a tag would
//     need credentials on the node (a RAM role allowed to tag), which the nodes do not have.

import (
	"fmt"
	"strings"
)

// Paths and unit of the boot path.
const (
	// LogPath is the bootstrap's log: every phase's output and the status lines.
	LogPath = "/var/log/gpu-cluster.log"
	// StateDir holds a marker per finished phase and the status file.
	StateDir = "/var/lib/gpucluster"
	// StatusPath is the status file (ParseStatus reads it).
	StatusPath = StateDir + "/bootstrap-status"
	// ConsolePrefix starts every line the bootstrap writes to the serial console.
	ConsolePrefix = "gpucluster-bootstrap: "
	// BootstrapUnit is the systemd unit that runs the script.
	BootstrapUnit = "gpucluster-bootstrap.service"
	// phaseAttempts and phaseBackoff: a phase is tried phaseAttempts times, waiting phaseBackoff
	// seconds after the first failure and twice as long after each next one, at most 5 minutes
	// (15+30+60+120+240+300+300 s: about 18 minutes before the unit restarts the script).
	phaseAttempts = 8
	phaseBackoff  = 15
)

// Phase names, in the order they run (a node runs the ones its role and options need).
const (
	PhaseMirrors          = "mirrors"
	PhasePackages         = "packages"
	PhaseERDMA            = "erdma"
	PhaseDriver           = "driver"
	PhaseFabricManager    = "fabric-manager"
	PhaseContainerRuntime = "container-runtime"
	PhaseHostCUDA         = "host-cuda"
	PhaseKubelet          = "kubelet"
	PhaseMounts           = "mounts"
	PhaseJoin             = "join"
	PhaseInit             = "init"
	PhaseAddons           = "addons"
)

// Bootstrap states of the status file.
const (
	StateRunning  = "running"
	StateRetrying = "retrying"
	StateFailed   = "failed"
	StateJoined   = "joined"
	// StateBaked ends an image builder's script (bake.go): every install phase done, the
	// images pulled, the machine sealed and powering off for CreateImage.
	StateBaked = "baked"
)

// Status is the status file: what the bootstrap is doing, or how it ended.
type Status struct {
	// State is StateRunning, StateRetrying (the phase failed, another attempt follows),
	// StateFailed (every attempt failed; the unit starts the script again later) or StateJoined
	// (every phase done: the node is in the cluster).
	State string
	// Phase is the phase the state is about (the last one when joined).
	Phase string
	// Attempt and Attempts: the attempt of the phase, of how many.
	Attempt, Attempts int
	// Time is when the line was written, UTC, RFC 3339.
	Time string
}

// ParseStatus reads the status file's line.
func ParseStatus(line string) (Status, error) {
	var s Status
	fields := strings.Fields(line)
	if len(fields) != 4 {
		return s, fmt.Errorf("status %q: want 4 fields state= phase= attempt= time=", line)
	}
	for i, key := range []string{"state", "phase", "attempt", "time"} {
		v, ok := strings.CutPrefix(fields[i], key+"=")
		if !ok {
			return s, fmt.Errorf("status %q: field %d is not %s=", line, i+1, key)
		}
		switch key {
		case "state":
			s.State = v
		case "phase":
			s.Phase = v
		case "attempt":
			if _, err := fmt.Sscanf(v, "%d/%d", &s.Attempt, &s.Attempts); err != nil {
				return s, fmt.Errorf("status %q: attempt %q is not n/max", line, v)
			}
		case "time":
			s.Time = v
		}
	}
	switch s.State {
	case StateRunning, StateRetrying, StateFailed, StateJoined, StateBaked:
		return s, nil
	}
	return s, fmt.Errorf("status %q: unknown state %q", line, s.State)
}

// phase is one phase of the script: its name and its body (bash lines).
type phase struct {
	name  string
	lines []string
}

// bootstrapUnit runs the script. Restart=on-failure starts it again after a phase failed every
// attempt; a reboot starts it again too (WantedBy), and the markers make it resume. Once every
// phase is done the script exits at once. Exit status 3 is "not Ubuntu 22.04", which no retry
// mends. (Kept short: it is in the first node's user data, close to the 32 KB limit.)
const bootstrapUnit = `[Unit]
Description=gpucluster node bootstrap (` + LogPath + `)
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
ExecStart=/bin/bash ` + ScriptPath + `
Restart=on-failure
RestartSec=60
RestartPreventExitStatus=3
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
`

// runnerHead is the start of the script: settings, the status and console reporting, and the
// dispatch that runs one phase ("run <phase>") in a bash of its own with errexit (errexit does not
// work in a function called from an until condition, which is where the runner calls it).
// GPUCLUSTER_* variables move the state, log, console and os-release elsewhere and
// GPUCLUSTER_RUN_PHASE replaces how a phase runs: for tests, which run the script without root.
const runnerHead = `set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
S=${GPUCLUSTER_STATE:-` + StateDir + `}
LOG=${GPUCLUSTER_LOG:-` + LogPath + `}
CONSOLE=${GPUCLUSTER_CONSOLE:-/dev/console}
ATTEMPTS=${GPUCLUSTER_ATTEMPTS:-%d}
BACKOFF=${GPUCLUSTER_BACKOFF:-%d}
report() { echo "$(date -u +%%FT%%TZ) ` + ConsolePrefix + `$*"; echo "` + ConsolePrefix + `$*" >>"$CONSOLE" 2>/dev/null || true; }
status() { echo "state=$1 phase=$2 attempt=$3/$ATTEMPTS time=$(date -u +%%FT%%TZ)" >"$S/bootstrap-status.new" && mv -f "$S/bootstrap-status.new" "$S/bootstrap-status"; }
step() { echo "== $(date -u +%%FT%%TZ) $*"; }
log_error() { echo "$(date -u +%%FT%%TZ) ERROR $*"; }
apt_version() { apt-cache madison "$1" | awk -v p="$2-" 'index($3, p) == 1 { print $3; exit }'; }
`

// runnerTail runs the phases: each at most once (its marker), each tried ATTEMPTS times.
const runnerTail = `if [ "${1:-}" = run ]; then set -e; "p_${2//-/_}"; exit 0; fi
mkdir -p "$S"
exec >>"$LOG" 2>&1
. "${GPUCLUSTER_OS_RELEASE:-/etc/os-release}"
if [ "${ID:-}" != ubuntu ] || [ "${VERSION_ID:-}" != 22.04 ]; then
  log_error "unsupported OS ${PRETTY_NAME:-unknown}"; report "unsupported OS ${PRETTY_NAME:-unknown}: the bootstrap needs Ubuntu 22.04 (image ubuntu_22_04_x64_*)"; status failed os 1; exit 3
fi
digest() { declare -f "p_${1//-/_}" | sha256sum | cut -c1-16; }
phase() {
  local n=0 delay d
  d=$(digest "$1")
  if [ "$(cat "$S/phase-$1.done" 2>/dev/null)" = "$d" ]; then return 0; fi
  until n=$((n+1)); status running "$1" "$n"; ${GPUCLUSTER_RUN_PHASE:-bash "$0" run} "$1"; do
    log_error "phase $1 failed (attempt $n/$ATTEMPTS)"
    if [ "$n" -ge "$ATTEMPTS" ]; then status failed "$1" "$n"; report "phase $1 failed (attempt $n/$ATTEMPTS)"; exit 1; fi
    delay=$((BACKOFF << (n-1))); if [ "$delay" -gt 300 ]; then delay=300; fi
    status retrying "$1" "$n"; report "phase $1 failed (attempt $n/$ATTEMPTS), next in ${delay}s"; sleep "$delay"
  done
  echo "$d" >"$S/phase-$1.done"; report "phase $1 ok"
}
`

// renderScript is the script: the runner, a function p_<phase> per phase, and the calls in order;
// it ends joined.
func renderScript(role string, phases []phase) string {
	return renderScriptEnding(role, phases, StateJoined)
}

// renderScriptEnding is renderScript ending in state end (after the last phase, the status file
// and the console say end).
func renderScriptEnding(role string, phases []phase, end string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# gpucluster node bootstrap, role %s. Rendered by terraform-provider-gpucluster; run by %s.\n", role, BootstrapUnit)
	fmt.Fprintf(&b, runnerHead, phaseAttempts, phaseBackoff)
	for _, p := range phases {
		fmt.Fprintf(&b, "p_%s() {\n", strings.ReplaceAll(p.name, "-", "_"))
		for _, l := range p.lines {
			b.WriteString("  " + l + "\n")
		}
		b.WriteString("}\n")
	}
	b.WriteString(runnerTail)
	for _, p := range phases {
		b.WriteString("phase " + p.name + "\n")
	}
	b.WriteString("status " + end + " " + phases[len(phases)-1].name + " 1\nreport " + end + "\n")
	return b.String()
}

// ConsoleOutcome is what the bootstrap's serial console lines say about a node.
type ConsoleOutcome struct {
	// Joined: the last bootstrap line is "joined".
	Joined bool
	// Baked: the last bootstrap line is "baked" (an image builder that finished).
	Baked bool
	// FailedPhase is the phase whose every attempt failed, when that is the last word (the unit
	// starts the script again later: a later line may still say the phase is ok).
	FailedPhase string
	// LastOK is the last phase that succeeded.
	LastOK string
	// Seen: the output has any bootstrap line at all.
	Seen bool
}

// ParseConsole reads the bootstrap's lines (ConsolePrefix) from a serial console output, such as
// ECS GetInstanceConsoleOutput returns (decoded from Base64), and says how the bootstrap stands.
func ParseConsole(output string) ConsoleOutcome {
	var out ConsoleOutcome
	for _, line := range strings.Split(output, "\n") {
		i := strings.Index(line, ConsolePrefix)
		if i < 0 {
			continue
		}
		out.Seen = true
		rest := strings.TrimSpace(line[i+len(ConsolePrefix):])
		switch {
		case rest == StateJoined:
			out.Joined, out.FailedPhase = true, ""
		case rest == StateBaked:
			out.Baked, out.FailedPhase = true, ""
		case strings.HasPrefix(rest, "phase "):
			f := strings.Fields(rest)
			if len(f) < 3 {
				continue
			}
			switch {
			case f[2] == "ok":
				out.LastOK = f[1]
				if out.FailedPhase == f[1] {
					out.FailedPhase = ""
				}
			case f[2] == "failed" && !strings.Contains(rest, "next in"):
				out.FailedPhase, out.Joined, out.Baked = f[1], false, false
			}
		}
	}
	return out
}
