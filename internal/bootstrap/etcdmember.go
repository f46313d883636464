package bootstrap

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Removing the etcd members of control-plane nodes that are being replaced (issue #31). kubeadm
// runs etcd stacked on every control-plane node, each member named after its node; nothing
// removes a member when its machine goes, and etcd then refuses every member add (a replacement's
// kubeadm join --control-plane) with "etcdserver: unhealthy cluster" while it cannot reach the
// stale one. The runbook's answer is `etcdctl member remove` on a running control-plane node
// (https://kubernetes.io/docs/tasks/administer-cluster/configure-upgrade-etcd/#replacing-a-failed-etcd-member).
// The provider sends this script there with Cloud Assistant (RunCommand) before it deletes the
// old instances, while their etcd still runs.
//
// kubeadm installs no etcdctl on the host, but the etcd image it runs carries one: the script
// runs it in the node's etcd container with crictl, against the member on the loopback address
// where kubeadm's etcd manifest listens, with the etcd CA and the health-check client
// certificate kubeadm writes for exactly this kind of client
// (https://kubernetes.io/docs/setup/best-practices/certificates/#all-certificates).

// findEtcdContainer sets ctr to the node's running etcd container, or fails (sh and bash).
const findEtcdContainer = `ctr=$(crictl ps --name '^etcd$' --state running -q | head -n 1)
if [ -z "$ctr" ]; then echo "no etcd container runs on this node" >&2; exit 1; fi`

// etcdctlInContainer runs etcdctl in the container $ctr against the member on the loopback
// address, with the etcd CA and the health-check client certificate kubeadm writes; the
// subcommand follows.
const etcdctlInContainer = `crictl exec "$ctr" etcdctl --endpoints=https://127.0.0.1:2379 \
    --cacert=/etc/kubernetes/pki/etcd/ca.crt \
    --cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt \
    --key=/etc/kubernetes/pki/etcd/healthcheck-client.key`

// etcdMemberNameRE: a member is named after its node, a DNS subdomain (what a host name gives).
var etcdMemberNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)

// EtcdRemoveTries and EtcdRemoveInterval bound the removal script's retries of a refused
// `member remove`. etcd refuses to remove a voting member while fewer than a quorum of the
// others have been connected to it for its health interval, 5 s ("reconfigure breaks active
// quorum", mayRemoveMember and HealthInterval,
// https://github.com/etcd-io/etcd/blob/v3.7.0/server/etcdserver/server.go): in a roll the
// member of the node that replaced the last one has just joined, so the next removal can come
// too soon. kubeadm retries its own etcd member calls likewise (removeMember in
// cmd/kubeadm/app/util/etcd/etcd.go polls until its etcd API timeout).
const (
	EtcdRemoveTries    = 30
	EtcdRemoveInterval = 2 // seconds
)

// EtcdMemberRemoveScript is the shell script that removes the etcd members named names, run as
// root on a running control-plane node. It exits 0 when each is removed or was no member, and
// prints a line per name; a refused removal is tried again EtcdRemoveTries times in all,
// EtcdRemoveInterval seconds apart.
func EtcdMemberRemoveScript(names []string) (string, error) {
	if len(names) == 0 {
		return "", fmt.Errorf("no etcd member to remove")
	}
	for _, n := range names {
		if !etcdMemberNameRE.MatchString(n) {
			return "", fmt.Errorf("etcd member name %q is not a node name (lowercase letters, digits, '.' and '-')", n)
		}
	}
	return `#!/bin/sh
# gpucluster: remove the etcd members of replaced control-plane nodes.
set -eu
` + findEtcdContainer + `
ectl() {
  ` + etcdctlInContainer + ` "$@"
}
for name in ` + strings.Join(names, " ") + `; do
  id=$(ectl member list | awk -F', ' -v n="$name" '$3 == n { print $1 }')
  if [ -z "$id" ]; then echo "etcd member $name: not a member"; continue; fi
  tries=1
  until out=$(ectl member remove "$id" 2>&1); do
    if [ "$tries" -ge ` + strconv.Itoa(EtcdRemoveTries) + ` ]; then echo "etcd member $name: $out" >&2; exit 1; fi
    tries=$((tries + 1))
    sleep ` + strconv.Itoa(EtcdRemoveInterval) + `
  done
  echo "etcd member $name: removed"
done
`, nil
}
