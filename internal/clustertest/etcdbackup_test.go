package clustertest

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// checkEtcdRestore (issue #34) is the restore runbook on a stack applied with etcd_backup every
// minute (the emulator's clock only moves forward, and a clock hours ahead of the CLI's would
// refuse the destroy's signed requests): the control-plane nodes' snapshot timers store a
// snapshot of the real etcd after the add-ons were applied; the newest, read back from the
// bucket with the account's credentials, restored into a new control plane (a new etcd data
// directory, etcdutl snapshot restore's package) has every registered Node and the idle
// reaper's CronJob. It fails when no timer ran after it was called, or no snapshot reached the
// bucket.
func (s *stack) checkEtcdRestore(t *testing.T, prefix string) {
	t.Helper()
	// The last run's time, not the number of runs: the agent keeps only the latest runs.
	last := func() time.Time {
		runs := s.agent.EtcdSnapshots()
		if len(runs) == 0 {
			return time.Time{}
		}
		return runs[len(runs)-1].At
	}
	before := last()
	deadline := time.Now().Add(3 * time.Minute) // a bound for a hang, not a measure of speed
	for !last().After(before) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if !last().After(before) {
		t.Fatalf("no etcd snapshot timer ran after the add-ons were applied (the last run at %s): %+v", before, s.agent.EtcdSnapshots())
	}
	var latest string
	var bucket string
	for _, r := range s.agent.EtcdSnapshots() {
		if r.Error != "" {
			t.Errorf("an etcd snapshot run failed: %+v", r)
			continue
		}
		if strings.HasPrefix(r.Key, prefix+"/") {
			latest, bucket = r.Key, r.Bucket
		}
	}
	if latest == "" {
		t.Fatalf("no etcd snapshot stored under %s: %+v", prefix, s.agent.EtcdSnapshots())
	}
	data, err := s.client(t).GetObject(t.Context(), bucket, latest)
	if err != nil {
		t.Fatalf("the snapshot %s from the bucket: %v", latest, err)
	}
	file := filepath.Join(t.TempDir(), "snapshot.db")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	restored := offlinekube.StartT(t, offlinekube.Options{RestoreEtcdFrom: file})
	ctx := t.Context()
	for _, st := range s.agent.Statuses() {
		if st.Node == "" {
			continue
		}
		if _, err := restored.Client().CoreV1().Nodes().Get(ctx, st.Node, metav1.GetOptions{}); err != nil {
			t.Errorf("node %s after the restore: %v", st.Node, err)
		}
	}
	if _, err := restored.Client().BatchV1().CronJobs(manifests.DefaultNamespace).Get(ctx, "gpu-idle-reaper", metav1.GetOptions{}); err != nil {
		t.Errorf("the idle reaper's CronJob after the restore: %v", err)
	}
}

// auditSnapshot audits key when it is an etcd snapshot, reporting whether it is one: an object
// under the prefix a node's snapshot script puts to. A snapshot holds every Secret of the
// cluster, so it must be KMS-encrypted and no node's role may read it (only the account's own
// credentials do).
func (s *stack) auditSnapshot(t *testing.T, nodes []nodeBundle, key string) bool {
	t.Helper()
	put := path.Dir(key) + `/"$(date -u`
	if !strings.HasSuffix(key, ".db") || !slices.ContainsFunc(nodes, func(b nodeBundle) bool { return strings.Contains(b.text(), put) }) {
		return false
	}
	bucket := nodes[0].spec.Bucket
	var sse string
	err := s.client(t).OSS(t.Context(), "HeadObject", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.HeadObject(ctx, &oss.HeadObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key)})
		if err == nil {
			sse = oss.ToString(res.ServerSideEncryption)
		}
		return err
	})
	if err != nil || sse != "KMS" {
		t.Errorf("etcd snapshot %s: encryption %q (%v); want KMS", key, sse, err)
	}
	for _, b := range nodes {
		if _, err := s.emu.ReadObjectAsInstance(b.status.InstanceID, b.spec.RoleName, bucket, key); err == nil {
			t.Errorf("node %s's role %s reads etcd snapshot %s: a snapshot holds every Secret of the cluster", b.status.Node, b.spec.RoleName, key)
		}
	}
	return true
}
