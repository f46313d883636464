package nodeagent

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/bucket"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// etcdBackup is a control-plane pool's backup under prefix in the bucket gc-boot, written by role.
func etcdBackup(role, prefix, every string) *bootstrap.EtcdBackup {
	return &bootstrap.EtcdBackup{ObjectStore: testObjectStore(role), KeyPrefix: prefix, Every: every}
}

// snapshotStore lets role cp put under etcd-snapshots/ only, as the bucket policy does.
type snapshotStore struct{ objects map[string][]byte }

func (s *snapshotStore) write(_, role, bucket, key string, body []byte) error {
	if role != "cp" || !strings.HasPrefix(key, "etcd-snapshots/") {
		return errors.New("403 AccessDenied")
	}
	s.objects[bucket+"/"+key] = body
	return nil
}

// TestEtcdSnapshotTimerRuns: the first control-plane node's timer stores a snapshot when the
// node joins the cluster and then every period, at <prefix>/<UTC time>-<node>.db; a stopped
// instance runs none, nor one released; a prefix the bucket does not grant, a node without
// an etcd to snapshot, and a script that writes the file outside the container's mounts fail and
// store nothing.
func TestEtcdSnapshotTimerRuns(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = nil
	snap := func() ([]byte, error) { return []byte("etcd-db"), nil }
	boot := func(t *testing.T, o bootstrap.Options, snapshot func() ([]byte, error), ud ...string) (*clockedAgent, *snapshotStore) {
		c := newClockedAgent(t, v)
		store := &snapshotStore{objects: map[string][]byte{}}
		c.a.WriteObjectsWith(store.write)
		if snapshot != nil {
			c.a.SnapshotEtcdWith(snapshot)
		}
		u := userData(t, o)
		if len(ud) > 0 {
			u = ud[0]
		}
		if st := c.boot(0, instance("i-cp", "10.0.1.10", u, false)); st.Node == "" {
			t.Fatalf("first control-plane node did not register: %s", st.Reason)
		}
		return c, store
	}
	t.Run("every period", func(t *testing.T) {
		o := firstControlPlane(ca)
		o.Kubernetes.EtcdBackup = etcdBackup("cp", "etcd-snapshots/c", "2h")
		c, store := boot(t, o, snap)
		for range 5 { // 5 hours: runs at 0h, 2h, 4h
			c.view.Now = c.view.Now.Add(time.Hour)
			c.a.Sync(context.Background())
		}
		keyRE := regexp.MustCompile(`^etcd-snapshots/c/20260101T0[024]0000Z-izi-cpz\.db$`) // the node is named after its host name
		runs := c.a.EtcdSnapshots()
		if len(runs) != 3 || len(store.objects) != 3 {
			t.Fatalf("runs %+v, %d objects; want 3 of each", runs, len(store.objects))
		}
		for _, r := range runs {
			if r.Error != "" || !keyRE.MatchString(r.Key) || string(store.objects["gc-boot/"+r.Key]) != "etcd-db" {
				t.Errorf("run %+v (want the snapshot stored at etcd-snapshots/c/<time>-<node>.db)", r)
			}
		}
		c.view.Instances[0].Status = "Stopped" // no etcd static pod, no timer run
		c.view.Now = c.view.Now.Add(4 * time.Hour)
		c.a.Sync(context.Background())
		if n := len(c.a.EtcdSnapshots()); n != 3 {
			t.Errorf("%d runs while the instance is stopped; want still 3", n)
		}
		// Released, the node has left the cluster: its timer runs no more.
		c.view.Instances = nil
		for range 2 {
			c.view.Now = c.view.Now.Add(4 * time.Hour)
			c.a.Sync(context.Background())
		}
		if n := len(c.a.EtcdSnapshots()); n != 3 {
			t.Errorf("%d runs after the instance was released; want still 3", n)
		}
	})
	outside := firstControlPlane(ca)
	outside.Kubernetes.EtcdBackup = etcdBackup("cp", "etcd-snapshots/c", "")
	for _, tc := range []struct {
		name     string
		backup   *bootstrap.EtcdBackup
		snapshot func() ([]byte, error)
		userData string
		want     string
	}{
		{"prefix the bucket does not grant", etcdBackup("cp", "backups/c", ""), snap, "", "403 AccessDenied"},
		{"no etcd to snapshot", etcdBackup("cp", "etcd-snapshots/c", ""), nil, "", "context deadline exceeded"},
		{"snapshot saved outside the container's mounts", nil, snap,
			strings.Replace(renderDoc(t, outside), "snap=/var/lib/etcd/", "snap=/tmp/", 1), "No such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := firstControlPlane(ca)
			o.Kubernetes.EtcdBackup = tc.backup
			var ud []string
			if tc.userData != "" {
				ud = []string{base64.StdEncoding.EncodeToString([]byte(tc.userData))}
			}
			c, store := boot(t, o, tc.snapshot, ud...)
			runs := c.a.EtcdSnapshots()
			if len(runs) != 1 || !strings.Contains(runs[0].Error, tc.want) || len(store.objects) != 0 {
				t.Errorf("runs %+v, %d objects stored; want one failed run naming %q and nothing stored", runs, len(store.objects), tc.want)
			}
		})
	}
}

// TestEtcdSnapshotRestore is the restore runbook, offline, on a real etcd and control plane:
// objects are created, the first control-plane node's timer stores a snapshot of the real etcd
// in the emulator's OSS as the node's RAM role, the control plane is destroyed (every process
// stopped, its etcd data deleted), the snapshot is read back from the bucket and restored into a
// new data directory as etcdutl snapshot restore does, and a control plane started on it has
// the objects. The bucket policy lets the role put under the snapshot prefix only: a node whose
// backup names another prefix stores nothing, and then there is nothing to restore.
func TestEtcdSnapshotRestore(t *testing.T) {
	first := offlinekube.StartT(t, offlinekube.Options{})
	kube, err := NewKube(first.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns, name = "research", "run-config"
	if _, err := first.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"lr": "3e-4"}}
	if _, err := first.Client().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca := testCAs(t)[0]

	// stored boots a first control-plane node (host, role cp) with a backup under prefix in a
	// bucket whose policy lets cp put under etcd-snapshots/ only, and answers its timer's runs
	// and the scenario.
	stored := func(t *testing.T, host, prefix string) ([]EtcdSnapshotRun, *cloudScenario) {
		s := startCloud(t, true)
		const bkt = "gc-boot"
		if err := s.c.CreateBucket(ctx, cloud.BucketInput{Name: bkt, Encrypted: true}); err != nil {
			t.Fatal(err)
		}
		policy := bucket.Policy(bkt, core.AccountID, []bucket.Reader{{KeyPrefix: "gpucluster-bundles/cp", RoleName: "cp"}},
			[]bucket.Writer{{Key: "etcd-snapshots/c/*", RoleName: "cp"}})
		if err := s.c.PutBucketPolicy(ctx, bkt, policy); err != nil {
			t.Fatal(err)
		}
		o := s.behind(firstControlPlane(ca))
		o.Kubernetes.EtcdBackup = etcdBackup("cp", prefix, "")
		id := s.runAs(t, "ecs.g7.xlarge", host, renderDoc(t, o), "cp")
		s.backends(t, id)
		a := s.startAgent(t, kube)
		a.WriteObjectsWith(s.srv.WriteObjectAsInstance)
		a.SnapshotEtcdWith(func() ([]byte, error) { return first.SnapshotEtcd(ctx) })
		s.settle(t, a, []string{id}, registered)
		return a.EtcdSnapshots(), s
	}

	t.Run("refused", func(t *testing.T) {
		runs, s := stored(t, "refused-cp-0", "backups/c")
		if len(runs) != 1 || !strings.Contains(runs[0].Error, "AccessDenied") {
			t.Fatalf("runs %+v; want one refused with AccessDenied", runs)
		}
		if _, err := s.c.GetObject(ctx, runs[0].Bucket, runs[0].Key); !errors.Is(err, cloud.ErrNotFound) {
			t.Errorf("the refused snapshot's object: %v; want not found", err)
		}
	})

	t.Run("restore", func(t *testing.T) {
		runs, s := stored(t, "backup-cp-0", "etcd-snapshots/c")
		if len(runs) != 1 || runs[0].Error != "" || runs[0].Bytes == 0 {
			t.Fatalf("runs %+v; want one snapshot stored", runs)
		}
		// Destroy the control plane: every process stops and etcd's data is deleted.
		first.Stop()
		if err := os.RemoveAll(filepath.Join(first.WorkDir(), "etcd")); err != nil {
			t.Fatal(err)
		}
		data, err := s.c.GetObject(ctx, runs[0].Bucket, runs[0].Key)
		if err != nil {
			t.Fatalf("the snapshot from the bucket: %v", err)
		}
		file := filepath.Join(t.TempDir(), "snapshot.db")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		restored := offlinekube.StartT(t, offlinekube.Options{RestoreEtcdFrom: file})
		got, err := restored.Client().CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the ConfigMap after the restore: %v", err)
		}
		if got.Data["lr"] != "3e-4" {
			t.Errorf("the restored ConfigMap holds %v; want lr=3e-4", got.Data)
		}
		if _, err := restored.Client().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("the namespace after the restore: %v", err)
		}
	})
}
