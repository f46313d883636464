package bootstrap

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// renderFiles renders o and returns its decoded files, path -> content.
func renderFiles(t *testing.T, o Options) map[string]string {
	t.Helper()
	doc, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range decodeCloudConfig(t, doc).WriteFiles {
		out[f.Path] = file(t, decodeCloudConfig(t, doc), f.Path).Content
	}
	return out
}

// phaseBody is the body of the script's function p_<name> ("" when the phase is not there).
func phaseBody(script, name string) string {
	start := strings.Index(script, "\np_"+strings.ReplaceAll(name, "-", "_")+"() {\n")
	if start < 0 {
		return ""
	}
	end := strings.Index(script[start:], "\n}\n")
	return script[start : start+end]
}

// phaseOrder is the order of the script's "phase <name>" calls.
func phaseOrder(script string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^phase ([a-z-]+)$`).FindAllStringSubmatch(script, -1) {
		out = append(out, m[1])
	}
	return out
}

// nvswitchWorker is the default ai_training worker: an 8-GPU NVSwitch type (ebmgn7ex) in a
// mainland region, everything else defaulted.
func nvswitchWorker(region string) Options {
	o := worker()
	o.Region, o.NVSwitch = region, true
	return o
}

// In a mainland region with the defaults, nothing the nodes run fetches from the hosts that do
// not answer reliably from there; outside mainland the upstream sources stay.
func TestMainlandDefaultsFetchNothingUpstream(t *testing.T) {
	blocked := regexp.MustCompile(`(?i)(pkgs\.k8s\.io|dl\.k8s\.io|nvidia\.github\.io|download\.nvidia\.com|github\.com|pypi\.org)`)
	cp := controlPlane()
	cp.Region = "cn-wulanchabu"
	cpJoin := controlPlane()
	cpJoin.Region, cpJoin.Kubernetes.JoinControlPlane, cpJoin.Kubernetes.CertificateKey = "cn-wulanchabu", true, strings.Repeat("ab", 32)
	cpJoin.Kubernetes.CACertHash = "sha256:" + strings.Repeat("ab", 32)
	for name, o := range map[string]Options{"gpu worker": nvswitchWorker("cn-wulanchabu"), "control plane": cp, "joining control plane": cpJoin} {
		files := renderFiles(t, o)
		script := files[ScriptPath]
		for i, line := range strings.Split(script, "\n") {
			if blocked.MatchString(line) {
				t.Errorf("%s, script line %d fetches from an upstream host: %s", name, i+1, line)
			}
		}
		if !strings.Contains(script, "http://"+AlibabaVPCMirrorHost+"/kubernetes-new/core/stable/v1.33/deb/") {
			t.Errorf("%s: the Kubernetes packages do not come from the in-VPC mirror", name)
		}
		if strings.Contains(files[KubeadmPath], "stable-") {
			t.Errorf("%s: kubeadm would resolve a version label at dl.k8s.io:\n%s", name, files[KubeadmPath])
		}
		if o.Role == RoleGPUWorker && !strings.Contains(script, "http://"+AlibabaVPCMirrorHost+"/libnvidia-container/stable/deb/$(ARCH) /") {
			t.Errorf("%s: the container toolkit does not come from the in-VPC mirror", name)
		}
	}
	// Outside mainland (cn-hongkong is not mainland) the upstream sources stay.
	for _, region := range []string{"cn-hongkong", "ap-southeast-1"} {
		script := renderFiles(t, nvswitchWorker(region))[ScriptPath]
		for _, want := range []string{"https://pkgs.k8s.io/core:/stable:/v1.33/deb/", "https://nvidia.github.io/libnvidia-container/gpgkey"} {
			if !strings.Contains(script, want) {
				t.Errorf("%s: script lacks the upstream source %s", region, want)
			}
		}
		if strings.Contains(script, AlibabaVPCMirrorHost+"/ubuntu") {
			t.Errorf("%s: the Ubuntu sources were rewritten to the in-VPC mirror", region)
		}
	}
	// An explicit package_mirror wins over the region.
	o := nvswitchWorker("cn-wulanchabu")
	o.PackageMirror = MirrorInternet
	if s := renderFiles(t, o)[ScriptPath]; !strings.Contains(s, "https://pkgs.k8s.io/") {
		t.Error("package_mirror = internet in cn-wulanchabu still uses the in-VPC mirror")
	}
}

// kubeadm gets one exact release: the minor's pin, or the release given.
func TestKubernetesVersionIsARelease(t *testing.T) {
	for in, want := range map[string]string{"": "v1.33.6", "1.33": "v1.33.6", "1.30": "v1.30.14", "1.32.4": "v1.32.4"} {
		o := controlPlane()
		o.Versions.Kubernetes = in
		var cc clusterConfiguration
		parts := strings.Split(renderFiles(t, o)[KubeadmPath], "---\n")
		if err := yaml.Unmarshal([]byte(parts[1]), &cc); err != nil {
			t.Fatal(err)
		}
		if cc.KubernetesVersion != want {
			t.Errorf("kubernetes %q: kubernetesVersion %q, want %q", in, cc.KubernetesVersion, want)
		}
		pkg := strings.TrimPrefix(want, "v") + "-1.1"
		if s := renderFiles(t, o)[ScriptPath]; !strings.Contains(s, "kubeadm="+pkg) {
			t.Errorf("kubernetes %q: the packages are not pinned to %s", in, pkg)
		}
	}
	o := controlPlane()
	o.Versions.Kubernetes = "1.32"
	_, err := Validate(o)
	pe, ok := planerr.As(err)
	if !ok || pe.Path != "versions.kubernetes" || !strings.Contains(pe.Fix, "1.33") {
		t.Errorf("Validate(kubernetes = 1.32, no pin) = %v; want a planerr.Error on versions.kubernetes naming the pinned minors", err)
	}
}

// An NVSwitch type's worker installs Fabric Manager at exactly the driver's version, enables it
// and ties kubelet to it, after the driver and before the join; a type without NVSwitch does not.
func TestFabricManagerOnNVSwitchTypes(t *testing.T) {
	o := nvswitchWorker("cn-wulanchabu")
	o.Versions.Driver = "550.127.08"
	script := renderFiles(t, o)[ScriptPath]
	fm := phaseBody(script, PhaseFabricManager)
	for _, want := range []string{
		"v=$(apt_version nvidia-fabricmanager-550 550.127.08)",
		"apt-get install -y --no-install-recommends nvidia-fabricmanager-550=$v",
		"systemctl enable nvidia-fabricmanager", "systemctl is-active nvidia-fabricmanager",
		"Requires=nvidia-fabricmanager.service\\nAfter=nvidia-fabricmanager.service",
	} {
		if !strings.Contains(fm, want) {
			t.Errorf("fabric-manager phase lacks %q:\n%s", want, fm)
		}
	}
	if drv := phaseBody(script, PhaseDriver); !strings.Contains(drv, "v=$(apt_version nvidia-headless-550-server 550.127.08)") ||
		!strings.Contains(drv, "nvidia-headless-550-server=$v nvidia-utils-550-server=$v") {
		t.Errorf("driver phase does not pin the driver packages to 550.127.08:\n%s", drv)
	}
	order := strings.Join(phaseOrder(script), " ")
	if !regexp.MustCompile(`driver fabric-manager .*kubelet .*join$`).MatchString(order) {
		t.Errorf("phases %s: want driver, then fabric-manager, before kubelet and join", order)
	}
	if strings.Contains(phaseBody(script, PhaseDriver), "lspci") {
		t.Error("an NVSwitch type's driver phase refuses NVSwitches")
	}
	o.NVSwitch = false
	s := renderFiles(t, o)[ScriptPath]
	if strings.Contains(s, "fabricmanager") || strings.Contains(s, "phase "+PhaseFabricManager) {
		t.Error("a type without NVSwitch gets Fabric Manager")
	}
	// ...but a machine that has NVSwitches after all (a type the catalog misses) fails its
	// driver phase rather than join with GPUs CUDA cannot use.
	if !strings.Contains(phaseBody(s, PhaseDriver), "lspci -d 10de::0680") {
		t.Error("a type without NVSwitch does not check the machine for NVSwitches")
	}
}

// nouveau is blacklisted and out of the initramfs before the driver is installed.
func TestNouveauBlacklistedBeforeTheDriver(t *testing.T) {
	drv := phaseBody(renderFiles(t, worker())[ScriptPath], PhaseDriver)
	bl, initramfs, install := strings.Index(drv, "blacklist nouveau"), strings.Index(drv, "update-initramfs -u"), strings.Index(drv, "nvidia-headless-535-server=$v")
	if bl < 0 || initramfs < bl || install < initramfs {
		t.Errorf("driver phase: blacklist at %d, update-initramfs at %d, install at %d; want them in that order:\n%s", bl, initramfs, install, drv)
	}
}

// apt_version picks the archive's revision of exactly the driver version, not a longer one.
func TestAptVersionPicksTheExactDriver(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	requireTool(t, "awk", "gawk")
	script := renderFiles(t, worker())[ScriptPath]
	var fn string
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, "apt_version()") {
			fn = l
		}
	}
	dir := t.TempDir()
	stub := "#!/bin/sh\nprintf '%s\\n' " +
		"' nvidia-fabricmanager-535 | 535.183.011-0ubuntu1 | http://x jammy-updates/multiverse amd64 Packages' " +
		"' nvidia-fabricmanager-535 | 535.183.01-0ubuntu0.22.04.1 | http://x jammy-updates/multiverse amd64 Packages' " +
		"' nvidia-fabricmanager-535 | 535.161.08-0ubuntu2.22.04.1 | http://x jammy-security/multiverse amd64 Packages'\n"
	if err := os.WriteFile(filepath.Join(dir, "apt-cache"), []byte(stub), 0o700); err != nil {
		t.Fatal(err)
	}
	for version, want := range map[string]string{"535.183.01": "535.183.01-0ubuntu0.22.04.1", "535.161.08": "535.161.08-0ubuntu2.22.04.1", "535.230.02": ""} {
		cmd := exec.Command(bash, "-c", fn+"\napt_version nvidia-fabricmanager-535 "+version)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("apt_version %s = %q (%v), want %q", version, out, err, want)
		}
	}
}

// fakePhase plays the phases for the runner: it records each run and fails the phase named in
// $FAIL as many times as $STATE/fails-left says.
const fakePhase = `#!/bin/bash
echo "$1" >> "$STATE/runs"
if [ "$1" = "${FAIL:-}" ] && [ -s "$STATE/fails-left" ]; then
  n=$(cat "$STATE/fails-left"); echo $((n-1)) > "$STATE/fails-left"
  if [ "$n" -gt 0 ]; then echo "phase $1 failing on purpose" >&2; exit 1; fi
fi
`

// The runner runs every phase once, in order, leaves a marker per phase, retries a failing phase
// with backoff, reports the failure in the status file and on the console, and after a restart
// (a reboot, or the unit's Restart=) resumes at the phase that failed.
func TestPhaseRunnerMarkersRetriesAndResume(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	script := renderFiles(t, nvswitchWorker("cn-wulanchabu"))[ScriptPath]
	phases := phaseOrder(script)
	dir := t.TempDir()
	state, console, logf := filepath.Join(dir, "state"), filepath.Join(dir, "console"), filepath.Join(dir, "log")
	for _, d := range []string{state} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, content string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "bootstrap.sh"), script)
	write(filepath.Join(dir, "fake-phase"), fakePhase)
	write(filepath.Join(dir, "os-release"), "ID=ubuntu\nVERSION_ID=22.04\n")
	run := func() (string, error) {
		cmd := exec.Command(bash, filepath.Join(dir, "bootstrap.sh"))
		cmd.Env = append(os.Environ(), "GPUCLUSTER_STATE="+state, "GPUCLUSTER_LOG="+logf, "GPUCLUSTER_CONSOLE="+console,
			"GPUCLUSTER_OS_RELEASE="+filepath.Join(dir, "os-release"), "GPUCLUSTER_RUN_PHASE="+filepath.Join(dir, "fake-phase"),
			"GPUCLUSTER_ATTEMPTS=3", "GPUCLUSTER_BACKOFF=0", "STATE="+state, "FAIL="+PhaseDriver)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	status := func() Status {
		t.Helper()
		s, err := ParseStatus(strings.TrimSpace(read(filepath.Join(state, "bootstrap-status"))))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Boot 1: the driver phase fails all 3 attempts.
	write(filepath.Join(state, "fails-left"), "3")
	if out, err := run(); err == nil {
		t.Fatalf("the runner succeeded with a phase failing every attempt:\n%s", out)
	}
	if s := status(); s.State != StateFailed || s.Phase != PhaseDriver || s.Attempt != 3 || s.Attempts != 3 {
		t.Errorf("status after the failure = %+v, want failed at %s, attempt 3/3", s, PhaseDriver)
	}
	cons := read(console)
	for _, want := range []string{ConsolePrefix + "phase packages ok\n", ConsolePrefix + "phase driver failed (attempt 1/3), next in 0s\n", ConsolePrefix + "phase driver failed (attempt 3/3)\n"} {
		if !strings.Contains(cons, want) {
			t.Errorf("console lacks %q:\n%s", want, cons)
		}
	}
	if got := ParseConsole(cons); got.FailedPhase != PhaseDriver || got.Joined || got.LastOK != PhaseERDMA {
		t.Errorf("ParseConsole of the runner's console = %+v, want failed at %s after %s", got, PhaseDriver, PhaseERDMA)
	}
	if strings.Contains(cons, "phase "+PhaseFabricManager) || strings.Contains(cons, StateJoined) {
		t.Errorf("the runner went on after a failed phase:\n%s", cons)
	}
	if !strings.Contains(read(logf), "phase driver failing on purpose") {
		t.Error("the phase's own output is not in the log")
	}
	// Each failed attempt is one ERROR line in the log: what the cluster-health alert counts.
	if n := strings.Count(read(logf), " ERROR phase driver failed (attempt "); n != 3 {
		t.Errorf("the log has %d ERROR lines for the driver phase's 3 failed attempts:\n%s", n, read(logf))
	}

	// Boot 2 (the unit restarts the script): the done phases are skipped; the driver fails once
	// more, then succeeds; every later phase runs once.
	write(filepath.Join(state, "fails-left"), "1")
	if out, err := run(); err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	runs := strings.Fields(read(filepath.Join(state, "runs")))
	count := map[string]int{}
	for _, r := range runs {
		count[r]++
	}
	for _, p := range phases {
		want := 1
		if p == PhaseDriver {
			want = 5 // 3 on the first boot, 2 on the second
		}
		if count[p] != want {
			t.Errorf("phase %s ran %d times, want %d (runs: %v)", p, count[p], want, runs)
		}
		if _, err := os.Stat(filepath.Join(state, "phase-"+p+".done")); err != nil {
			t.Errorf("no marker for phase %s: %v", p, err)
		}
	}
	if s := status(); s.State != StateJoined {
		t.Errorf("status after the second run = %+v, want joined", s)
	}
	if got := ParseConsole(read(console)); !got.Joined || got.FailedPhase != "" {
		t.Errorf("ParseConsole after the second run = %+v, want joined", got)
	}
	if !strings.HasSuffix(read(console), ConsolePrefix+"joined\n") {
		t.Errorf("console does not end with joined:\n%s", read(console))
	}

	// Boot 3 (a reboot of a joined node): nothing runs again.
	before := read(filepath.Join(state, "runs"))
	if out, err := run(); err != nil || read(filepath.Join(state, "runs")) != before {
		t.Errorf("a joined node ran phases again (%v):\n%s", err, out)
	}
}

// The unsupported-OS exit is the one the unit does not restart for.
func TestPhaseRunnerRefusesOtherOS(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	dir := t.TempDir()
	p := filepath.Join(dir, "bootstrap.sh")
	if err := os.WriteFile(p, []byte(renderFiles(t, controlPlane())[ScriptPath]), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "os-release"), []byte("ID=ubuntu\nVERSION_ID=24.04\nPRETTY_NAME='Ubuntu 24.04'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, p)
	cmd.Env = append(os.Environ(), "GPUCLUSTER_STATE="+dir, "GPUCLUSTER_LOG="+filepath.Join(dir, "log"), "GPUCLUSTER_CONSOLE="+filepath.Join(dir, "console"),
		"GPUCLUSTER_OS_RELEASE="+filepath.Join(dir, "os-release"), "GPUCLUSTER_RUN_PHASE=false")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(bootstrapUnit, "RestartPreventExitStatus=3") {
		t.Errorf("Ubuntu 24.04: exit %v, want 3, which the unit does not restart for", err)
	}
	if s, _ := os.ReadFile(filepath.Join(dir, "bootstrap-status")); !strings.HasPrefix(string(s), "state=failed phase=os ") {
		t.Errorf("status %q", s)
	}
}

func TestParseStatus(t *testing.T) {
	s, err := ParseStatus("state=failed phase=fabric-manager attempt=8/8 time=2026-12-04T12:00:00Z")
	if err != nil || s != (Status{State: StateFailed, Phase: PhaseFabricManager, Attempt: 8, Attempts: 8, Time: "2026-12-04T12:00:00Z"}) {
		t.Errorf("ParseStatus = %+v, %v", s, err)
	}
	for _, bad := range []string{"", "joined", "state=done phase=join attempt=1/8 time=x", "state=joined phase=join attempt=one time=x"} {
		if _, err := ParseStatus(bad); err == nil {
			t.Errorf("ParseStatus(%q) accepted it", bad)
		}
	}
}

func TestParseConsole(t *testing.T) {
	kernel := "[    5.1] systemd[1]: Started Journal Service.\n"
	tests := []struct {
		name, output string
		want         ConsoleOutcome
	}{
		{"no bootstrap yet", kernel, ConsoleOutcome{}},
		{"retrying is not failed", kernel + ConsolePrefix + "phase packages ok\n" + ConsolePrefix + "phase driver failed (attempt 1/8), next in 15s\n",
			ConsoleOutcome{Seen: true, LastOK: PhasePackages}},
		{"failed at a phase", ConsolePrefix + "phase packages ok\r\n" + ConsolePrefix + "phase driver failed (attempt 8/8)\r\n",
			ConsoleOutcome{Seen: true, LastOK: PhasePackages, FailedPhase: PhaseDriver}},
		{"failed, then the unit's restart got through", ConsolePrefix + "phase driver failed (attempt 8/8)\n" + ConsolePrefix + "phase driver ok\n" +
			ConsolePrefix + "phase join ok\n" + ConsolePrefix + "joined\n", ConsoleOutcome{Seen: true, LastOK: PhaseJoin, Joined: true}},
	}
	for _, tt := range tests {
		if got := ParseConsole(tt.output); got != tt.want {
			t.Errorf("%s: ParseConsole = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
