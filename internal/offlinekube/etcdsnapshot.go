package offlinekube

// etcd snapshots and restores (issue #34): the cluster's etcd is real, so a backup taken from it
// and a control plane started on the restored data prove the restore runbook offline.
//
// SnapshotEtcd takes the snapshot `etcdctl snapshot save` takes: the client's
// Maintenance.Snapshot, etcd's backend streamed over its client API
// (https://etcd.io/docs/v3.6/op-guide/recovery/#snapshotting-the-keyspace). Options.RestoreEtcdFrom
// restores one the way `etcdutl snapshot restore` does, through the package that command runs
// (go.etcd.io/etcd/etcdutl/v3/snapshot), into a new data directory with a new member and cluster
// ID (https://etcd.io/docs/v3.6/op-guide/recovery/#restoring-a-cluster).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// etcdMemberName is the member name tools/testkube/cmd/etcd gives its single member.
const etcdMemberName = "testkube"

// SnapshotEtcd answers a snapshot of the cluster's etcd as etcdctl snapshot save writes it.
func (c *Cluster) SnapshotEtcd(ctx context.Context) ([]byte, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.etcdURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("offlinekube: etcd client: %w", err)
	}
	defer func() { _ = cli.Close() }()
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("offlinekube: etcd snapshot: %w", err)
	}
	defer func() { _ = rc.Close() }()
	var b bytes.Buffer
	if _, err := io.Copy(&b, rc); err != nil {
		return nil, fmt.Errorf("offlinekube: etcd snapshot: %w", err)
	}
	return b.Bytes(), nil
}

// restoreEtcd is `etcdutl snapshot restore <path> --name testkube --data-dir <dataDir>
// --initial-cluster testkube=<peerURL> --initial-advertise-peer-urls <peerURL>`: the snapshot's
// integrity hash is checked, and the data directory must not exist yet.
func restoreEtcd(path, dataDir, peerURL string) error {
	err := snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath: path, Name: etcdMemberName, OutputDataDir: dataDir,
		PeerURLs: []string{peerURL}, InitialCluster: etcdMemberName + "=" + peerURL, InitialClusterToken: "etcd-cluster",
	})
	if err != nil {
		return fmt.Errorf("offlinekube: restoring etcd from %s: %w", path, err)
	}
	return nil
}
