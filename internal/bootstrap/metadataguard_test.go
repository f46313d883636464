package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every node, whatever its role, starts the guard in its join or init phase before kubeadm starts
// the kubelet, and the unit orders itself before the kubelet at every later boot.
func TestMetadataGuardStartsBeforeAnyPod(t *testing.T) {
	first := controlPlane()
	joiner := controlPlane()
	joiner.Kubernetes.JoinControlPlane, joiner.Kubernetes.CertificateKey = true, strings.Repeat("ab", 32)
	joiner.Kubernetes.CACertHash = "sha256:" + strings.Repeat("ab", 32)
	for name, o := range map[string]Options{"gpu worker": worker(), "first control-plane node": first, "joining control-plane node": joiner} {
		t.Run(name, func(t *testing.T) {
			files := renderFiles(t, o)
			unit := files[systemdDir+MetadataGuardUnit]
			for _, want := range []string{"Before=containerd.service kubelet.service", "WantedBy=multi-user.target", "-t raw -I PREROUTING -d 100.100.100.200/32 -j DROP"} {
				if !strings.Contains(unit, want) {
					t.Errorf("the guard unit lacks %q:\n%s", want, unit)
				}
			}
			phase := PhaseJoin
			if o.initNode() {
				phase = PhaseInit
			}
			body := phaseBody(files[ScriptPath], phase)
			guard, kubeadm := strings.Index(body, "systemctl enable --now "+MetadataGuardUnit), strings.Index(body, "kubeadm ")
			if guard < 0 || kubeadm < 0 || guard > kubeadm {
				t.Errorf("phase %s does not start the guard before kubeadm (guard at %d, kubeadm at %d):\n%s", phase, guard, kubeadm, body)
			}
		})
	}
}

// The unit's command inserts the rule once: a second start (a restart of the unit) finds it and
// adds no second copy. iptables is a stand-in that keeps the raw table's PREROUTING in a file.
func TestMetadataGuardInsertsTheRuleOnce(t *testing.T) {
	sh := requireTool(t, "sh", "dash")
	dir := t.TempDir()
	fake := `#!/bin/sh
rules="$RULES"
[ "$1 $2" = "-t raw" ] || { echo "unexpected table: $*" >&2; exit 2; }
op=$3; shift 4
case $op in
-C) grep -qxF -- "$*" "$rules" 2>/dev/null ;;
-I) echo "$*" >> "$rules" ;;
*) echo "unexpected: $op" >&2; exit 2 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "iptables"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	var start string
	for _, line := range strings.Split(metadataGuardUnitText, "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			start = v
		}
	}
	command, ok := strings.CutPrefix(start, "/bin/sh -c ")
	if !ok {
		t.Fatalf("ExecStart %q is not /bin/sh -c '<command>'", start)
	}
	command = strings.Trim(command, "'")
	rules := filepath.Join(dir, "rules")
	for range 2 {
		cmd := exec.Command(sh, "-c", command)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "RULES="+rules)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	got, _ := os.ReadFile(rules)
	if string(got) != MetadataGuardRule+"\n" {
		t.Errorf("after two starts the raw PREROUTING chain holds %q, want the rule once", got)
	}
}
