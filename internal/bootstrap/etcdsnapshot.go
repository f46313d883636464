package bootstrap

// etcd snapshots to OSS (issue #34). Every control-plane node runs a timer that saves a snapshot
// of its etcd member and stores it in the bootstrap bucket under a prefix of its own, with the
// node's RAM-role keys from the metadata service (the bundle's fetch script, as the join store's
// timer does), KMS-encrypted by the put itself. The bucket keeps versions, and its lifecycle
// rule expires old snapshots; the restore runbook is the guide "etcd backup and restore".
//
// How the snapshot is taken: kubeadm installs no etcdctl on the host, but the etcd image it runs
// carries one, so the script runs `etcdctl snapshot save` in the node's etcd container with
// crictl, against the member on the loopback address with the etcd CA and the health-check
// client certificate kubeadm writes (etcdmember.go says why those). The snapshot command is the
// one Kubernetes documents for backing up etcd
// (https://kubernetes.io/docs/tasks/administer-cluster/configure-upgrade-etcd/#snapshot-using-etcdctl-options).
// The file lands in /var/lib/etcd, the data directory kubeadm's etcd manifest mounts from the
// host (https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/ha-topology/), so
// the host reads it there; root-only like the data it copies, and removed once stored.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Paths, units and figures of the snapshot timer.
const (
	// EtcdSnapshotScriptPath saves a snapshot and stores it (control-plane nodes).
	EtcdSnapshotScriptPath = "/usr/local/sbin/gpucluster-etcd-snapshot.sh"
	etcdSnapshotUnit       = "gpucluster-etcd-snapshot"
	// DefaultEtcdSnapshotEvery is how often the timer runs when EtcdBackup.Every is empty.
	DefaultEtcdSnapshotEvery = "6h"
	// etcdSnapshotFile is where etcdctl writes the snapshot, inside the container and on the host.
	etcdSnapshotFile = "/var/lib/etcd/gpucluster-snapshot.db"
)

// EtcdBackup is where and how often a control-plane node stores etcd snapshots: objects
// <KeyPrefix>/<UTC time>-<host name>.db in Bucket, written with the node's RAM role.
type EtcdBackup struct {
	ObjectStore
	// KeyPrefix holds the snapshots (the bucket policy lets the control-plane role PutObject
	// under it, and nothing else).
	KeyPrefix string
	// Every is the timer's period, a systemd time span of minutes or hours ("6h", "90min"); ""
	// is DefaultEtcdSnapshotEvery.
	Every string
}

var etcdSnapshotEveryRE = regexp.MustCompile(`^[1-9][0-9]{0,4}(min|h)$`)

// every is the timer's period.
func (b *EtcdBackup) every() string {
	if b.Every == "" {
		return DefaultEtcdSnapshotEvery
	}
	return b.Every
}

// validateEtcdBackup checks an EtcdBackup: a control-plane node's, every value one a script line
// takes unquoted, a prefix without a leading or trailing '/', a period systemd and the node agent
// read alike.
func validateEtcdBackup(o Options) error {
	b := o.Kubernetes.EtcdBackup
	if b == nil {
		return nil
	}
	if o.Role != RoleControlPlane {
		return planerr.Input("bootstrap_bundle.etcd_backup", b.KeyPrefix, "is only for control-plane nodes, which run etcd", "remove etcd_backup from this pool")
	}
	fields := b.fields()
	fields["etcd_backup.key_prefix"] = b.KeyPrefix
	if err := checkStoreFields(fields); err != nil {
		return err
	}
	if strings.HasSuffix(b.KeyPrefix, "/") || strings.Contains(b.KeyPrefix, "//") {
		return planerr.Input("bootstrap_bundle.etcd_backup.key_prefix", b.KeyPrefix, "ends in '/' or has an empty segment", "give segments joined by single '/', such as etcd-snapshots/prod")
	}
	if !etcdSnapshotEveryRE.MatchString(b.every()) {
		return planerr.Input("bootstrap_bundle.etcd_backup.every", b.Every, "is not a period of whole minutes or hours", `give one such as "6h" or "90min"`)
	}
	return nil
}

// etcdSnapshotFiles are a control-plane node's snapshot timer: the script, its service and timer.
func etcdSnapshotFiles(o Options) []writeFile {
	b := o.Kubernetes.EtcdBackup
	if o.Role != RoleControlPlane || b == nil {
		return nil
	}
	var s strings.Builder
	s.WriteString("#!/bin/bash\n# Saves a snapshot of this node's etcd member and stores it in OSS. Rendered by terraform-provider-gpucluster.\n")
	s.WriteString("set -euo pipefail\n" + findEtcdContainer + "\n")
	fmt.Fprintf(&s, "snap=%s\ntrap 'rm -f \"$snap\"' EXIT\n", etcdSnapshotFile)
	s.WriteString(etcdctlInContainer + " snapshot save \"$snap\"\n")
	// The put's temporary copy goes next to the snapshot (root-only, on disk) rather than to
	// the fetch script's default /run, a tmpfs a database of gigabytes would fill.
	fmt.Fprintf(&s, "TMPDIR=/var/lib/etcd %s put %s <\"$snap\"\n",
		FetchScriptPath, b.storeArgs(b.KeyPrefix+`/"$(date -u +%Y%m%dT%H%M%SZ)-$(hostname).db"`))
	return storeTimerFiles(timerUnit{name: etcdSnapshotUnit, description: "Store a snapshot of etcd in OSS",
		condition: "/etc/kubernetes/manifests/etcd.yaml", script: EtcdSnapshotScriptPath, body: s.String(), restartSec: "5min", every: b.every()})
}

// etcdSnapshotLines start the timer and take a first snapshot at once, once the node's etcd
// runs, after the phase's systemctl daemon-reload. --no-block, as joinTokenLines: a bucket that
// refuses the put must not fail the phase; the unit tries again and says why in its journal.
func (o Options) etcdSnapshotLines() []string {
	if len(etcdSnapshotFiles(o)) == 0 {
		return nil
	}
	return []string{"systemctl enable --now " + etcdSnapshotUnit + ".timer", "systemctl start --no-block " + etcdSnapshotUnit + ".service"}
}
