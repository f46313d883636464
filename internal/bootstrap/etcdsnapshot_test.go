package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// backup is an EtcdBackup in the bootstrap bucket of the join store's tests.
func backup() *EtcdBackup {
	return &EtcdBackup{ObjectStore: ObjectStore{Region: "cn-wulanchabu", Bucket: "gc-boot", RoleName: "cp", MetadataEndpoint: "http://100.100.100.200",
		OSSEndpoint: "https://gc-boot.oss-cn-wulanchabu-internal.aliyuncs.com"}, KeyPrefix: "etcd-snapshots/c"}
}

// TestEtcdSnapshotTimer: both kinds of control-plane node carry the timer, its script and
// service, start it once the node's etcd runs, and the timer runs at the configured period (6h
// by default).
func TestEtcdSnapshotTimer(t *testing.T) {
	first := controlPlane()
	first.Kubernetes.EtcdBackup = backup()
	joiner := first
	joiner.Kubernetes.JoinControlPlane, joiner.Kubernetes.CACertHash = true, "sha256:"+strings.Repeat("ab", 32)
	joiner.Kubernetes.CertificateKey = strings.Repeat("ab", 32)
	every := *backup()
	every.Every = "90min"
	joiner.Kubernetes.EtcdBackup = &every
	for name, c := range map[string]struct {
		o      Options
		period string
	}{"first": {first, "6h"}, "joining": {joiner, "90min"}} {
		t.Run(name, func(t *testing.T) {
			doc, err := Render(c.o)
			if err != nil {
				t.Fatal(err)
			}
			cc := decodeCloudConfig(t, doc)
			script := file(t, cc, EtcdSnapshotScriptPath).Content
			for _, want := range []string{"etcdctl --endpoints=https://127.0.0.1:2379", `snapshot save "$snap"`,
				FetchScriptPath + " put http://100.100.100.200 https://gc-boot.oss-cn-wulanchabu-internal.aliyuncs.com cn-wulanchabu gc-boot etcd-snapshots/c/"} {
				if !strings.Contains(script, want) {
					t.Errorf("snapshot script lacks %q:\n%s", want, script)
				}
			}
			if timer := file(t, cc, systemdDir+etcdSnapshotUnit+".timer").Content; !strings.Contains(timer, "OnUnitActiveSec="+c.period+"\n") {
				t.Errorf("timer runs not every %s:\n%s", c.period, timer)
			}
			if unit := file(t, cc, systemdDir+etcdSnapshotUnit+".service").Content; !strings.Contains(unit, "ExecStart="+EtcdSnapshotScriptPath+"\n") {
				t.Errorf("service runs not the script:\n%s", unit)
			}
			boot := file(t, cc, ScriptPath).Content
			if !strings.Contains(boot, "systemctl enable --now "+etcdSnapshotUnit+".timer") || !strings.Contains(boot, "systemctl start --no-block "+etcdSnapshotUnit+".service") {
				t.Errorf("the bootstrap does not start the snapshot timer:\n%s", boot)
			}
		})
	}
}

// TestEtcdBackupRefused: a worker's backup, a prefix or period the script or the agent cannot
// take, are plan errors naming the attribute.
func TestEtcdBackupRefused(t *testing.T) {
	w := worker()
	w.Kubernetes.EtcdBackup = backup()
	slash, space, every := backup(), backup(), backup()
	slash.KeyPrefix, space.KeyPrefix, every.Every = "etcd/", "etcd snapshots", "1d"
	cases := map[string]struct {
		o    Options
		path string
	}{"worker": {w, "bootstrap_bundle.etcd_backup"}}
	for name, b := range map[string]*EtcdBackup{"trailing slash": slash, "space": space, "days": every} {
		o := controlPlane()
		o.Kubernetes.EtcdBackup = b
		path := "bootstrap_bundle.etcd_backup.key_prefix"
		if b == every {
			path = "bootstrap_bundle.etcd_backup.every"
		}
		cases[name] = struct {
			o    Options
			path string
		}{o, path}
	}
	for name, c := range cases {
		_, err := Render(c.o)
		if pe, _ := planerr.As(err); pe == nil || pe.Path != c.path {
			t.Errorf("%s: %v; want a plan error on %s", name, err, c.path)
		}
	}
}

// TestEtcdSnapshotScriptRuns runs the script in bash against a crictl that writes the snapshot
// etcdctl would and a fetch script that records its put: the snapshot goes, on stdin, to a key
// <prefix>/<UTC time>-<host>.db, and the file is gone afterwards. When etcdctl fails nothing is
// put and the script fails.
func TestEtcdSnapshotScriptRuns(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	o := controlPlane()
	o.Kubernetes.EtcdBackup = backup()
	doc, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	script := file(t, decodeCloudConfig(t, doc), EtcdSnapshotScriptPath).Content
	run := func(etcdctlFails bool) (out, put, stored string, snapLeft bool, err error) {
		dir := t.TempDir()
		snap, fetch, putLog, body := filepath.Join(dir, "snapshot.db"), filepath.Join(dir, "fetch"), filepath.Join(dir, "put"), filepath.Join(dir, "body")
		exit := "0"
		if etcdctlFails {
			exit = "1"
		}
		crictl := "#!/bin/bash\ncase $1 in ps) echo c0ffee ;; exec) [[ $2 == c0ffee && $* == *'snapshot save '* ]] || exit 2; " +
			"[[ " + exit + " == 0 ]] || { echo 'Error: context deadline exceeded' >&2; exit 1; }; printf 'etcd-db' >\"${@: -1}\" ;; esac\n"
		fetchScript := "#!/bin/bash\necho \"$* TMPDIR=$TMPDIR\" >" + putLog + "\ncat >" + body + "\n"
		for p, c := range map[string]string{filepath.Join(dir, "crictl"): crictl, fetch: fetchScript} {
			if err := os.WriteFile(p, []byte(c), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		s := strings.ReplaceAll(strings.ReplaceAll(script, etcdSnapshotFile, snap), FetchScriptPath, fetch)
		cmd := exec.Command(bash, "-c", s)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		b, err := cmd.CombinedOutput()
		p, _ := os.ReadFile(putLog)
		st, _ := os.ReadFile(body)
		_, statErr := os.Stat(snap)
		return string(b), string(p), string(st), statErr == nil, err
	}
	out, put, stored, left, err := run(false)
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out)
	}
	keyRE := regexp.MustCompile(`^put \S+ \S+ cn-wulanchabu gc-boot etcd-snapshots/c/[0-9]{8}T[0-9]{6}Z-[A-Za-z0-9.-]+\.db cp TMPDIR=/var/lib/etcd$`)
	if !keyRE.MatchString(strings.TrimSpace(put)) || stored != "etcd-db" || left {
		t.Errorf("put %q with %q (want the snapshot at etcd-snapshots/c/<time>-<host>.db), snapshot file left: %v\n%s", put, stored, left, out)
	}
	if out, put, _, _, err := run(true); err == nil || put != "" || !strings.Contains(out, "context deadline exceeded") {
		t.Errorf("with etcdctl failing: %v, put %q\n%s", err, put, out)
	}
}
