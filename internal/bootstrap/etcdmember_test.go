package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEtcdMemberRemoveScript: the names are node names and nothing else reaches the shell; the
// script runs etcdctl in the etcd container against the loopback member with kubeadm's files.
func TestEtcdMemberRemoveScript(t *testing.T) {
	for _, bad := range [][]string{nil, {"Node-1"}, {"a b"}, {"x;reboot"}, {"-rf"}} {
		if _, err := EtcdMemberRemoveScript(bad); err == nil {
			t.Errorf("names %q accepted", bad)
		}
	}
	s, err := EtcdMemberRemoveScript([]string{"izbp1z", "cp-2.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"for name in izbp1z cp-2.example; do", `crictl exec "$ctr" etcdctl --endpoints=https://127.0.0.1:2379`,
		"/etc/kubernetes/pki/etcd/healthcheck-client.key", `member remove "$id"`, "set -eu"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}

// TestEtcdMemberRemoveScriptRuns runs the script in sh against a crictl that answers etcdctl's
// member list in its default (simple) format, "ID, status, name, peer URLs, client URLs,
// learner": it removes exactly the named member's ID, says which name was no member, and fails
// when no etcd container runs.
func TestEtcdMemberRemoveScriptRuns(t *testing.T) {
	sh := requireTool(t, "sh", "dash")
	s, err := EtcdMemberRemoveScript([]string{"cp-old", "cp-gone"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(running string) (string, string, error) {
		dir := t.TempDir()
		log := filepath.Join(dir, "log")
		crictl := "#!/bin/sh\necho \"$*\" >>" + log + "\n" +
			"case \"$1\" in ps) printf '" + running + "' ;; exec) case \"$*\" in *'member list'*)\n" +
			"  echo '8e9e05c52164694d, started, cp-keep, https://10.0.0.1:2380, https://10.0.0.1:2379, false'\n" +
			"  echo '91bc3c398fb3c146, started, cp-old, https://10.0.0.2:2380, https://10.0.0.2:2379, false' ;; esac ;; esac\n"
		if err := os.WriteFile(filepath.Join(dir, "crictl"), []byte(crictl), 0o700); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, "-c", s)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		calls, _ := os.ReadFile(log)
		return string(out), string(calls), err
	}
	out, calls, err := run(`c0ffee\n`)
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out)
	}
	var removed []string
	for line := range strings.Lines(calls) {
		if _, id, ok := strings.Cut(strings.TrimSpace(line), "member remove "); ok {
			removed = append(removed, id)
		}
	}
	if len(removed) != 1 || removed[0] != "91bc3c398fb3c146" || !strings.Contains(calls, "exec c0ffee etcdctl") {
		t.Errorf("removed %v (want only cp-old's 91bc3c398fb3c146, in container c0ffee); crictl calls:\n%s", removed, calls)
	}
	if !strings.Contains(out, "etcd member cp-old: removed") || !strings.Contains(out, "etcd member cp-gone: not a member") {
		t.Errorf("output:\n%s", out)
	}
	if out, _, err := run(""); err == nil || !strings.Contains(out, "no etcd container") {
		t.Errorf("with no etcd container running: %v\n%s", err, out)
	}
}

// TestEtcdMemberRemoveScriptRetriesARefusal runs the script against an etcdctl whose member
// remove is refused the first times ("etcdserver: unhealthy cluster", as etcd answers while a
// just-joined member has been connected for less than its health interval): it tries again,
// EtcdRemoveInterval seconds apart (sleep is a stub here), and gives up with etcd's error after
// EtcdRemoveTries tries.
func TestEtcdMemberRemoveScriptRetriesARefusal(t *testing.T) {
	sh := requireTool(t, "sh", "dash")
	s, err := EtcdMemberRemoveScript([]string{"cp-old"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(refusals int) (out string, removes, sleeps int, err error) {
		dir := t.TempDir()
		count, slept := filepath.Join(dir, "removes"), filepath.Join(dir, "sleeps")
		crictl := "#!/bin/sh\ncase \"$*\" in ps*) echo c0ffee ;;\n" +
			"  *'member list'*) echo '91bc3c398fb3c146, started, cp-old, https://10.0.0.2:2380, https://10.0.0.2:2379, false' ;;\n" +
			"  *'member remove'*) echo x >>" + count + "; if [ $(wc -l <" + count + ") -le " + strconv.Itoa(refusals) + " ]; then\n" +
			"    echo 'Error: etcdserver: unhealthy cluster' >&2; exit 1; fi ;;\nesac\n"
		if err := os.WriteFile(filepath.Join(dir, "crictl"), []byte(crictl), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sleep"), []byte("#!/bin/sh\necho \"$1\" >>"+slept+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, "-c", s)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		raw, err := cmd.CombinedOutput()
		r, _ := os.ReadFile(count)
		z, _ := os.ReadFile(slept)
		return string(raw), strings.Count(string(r), "\n"), strings.Count(string(z), strconv.Itoa(EtcdRemoveInterval)+"\n"), err
	}
	out, removes, sleeps, err := run(2)
	if err != nil || !strings.Contains(out, "etcd member cp-old: removed") || removes != 3 || sleeps != 2 {
		t.Errorf("two refusals: %v, %d removes, %d sleeps of %d s, output:\n%s\nwant it removed on the third try", err, removes, sleeps, EtcdRemoveInterval, out)
	}
	out, removes, _, err = run(1000)
	if err == nil || !strings.Contains(out, "etcd member cp-old: Error: etcdserver: unhealthy cluster") || removes != EtcdRemoveTries {
		t.Errorf("refused every time: %v, %d removes, output:\n%s\nwant a failure with etcd's error after %d tries", err, removes, out, EtcdRemoveTries)
	}
}
