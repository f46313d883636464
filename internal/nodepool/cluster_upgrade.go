package nodepool

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// Before a control-plane pool rolls, the cluster's Kubernetes version is raised to the one its
// new nodes install (issue #34). kubeadm join --control-plane refuses a node whose kubelet is
// newer than kubeadm-config's kubernetesVersion, so a pool moved to the next minor could replace
// its first node and then wait forever for it to join. The provider runs
// bootstrap.KubeadmUpgradeScript (kubeadm upgrade apply) through Cloud Assistant on a running
// control-plane node first, as it runs the etcd member removal (etcd_members.go). The script
// does nothing when the cluster is already at the release, so every control-plane roll sends it.

// clusterUpgradeTimeout bounds kubeadm upgrade apply: apt, the image pulls and the static pods'
// restarts, which kubeadm itself waits up to five minutes for each
// (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-upgrade/, --timeout).
const clusterUpgradeTimeout = 20 * time.Minute

// RaiseClusterVersion runs spec.ClusterUpgrade on a running control-plane node (the pool's own
// first, else another pool's behind the load balancer) before the pool's nodes are replaced.
// A failure, or a command Cloud Assistant could not deliver, stops the roll with nothing deleted:
// the replacements could not join.
func RaiseClusterVersion(ctx context.Context, c *cloud.Client, spec Spec, current []cloud.Instance) error {
	if spec.Role != bootstrap.RoleControlPlane || spec.ClusterUpgrade == "" {
		return nil
	}
	runner, err := etcdRunner(ctx, c, spec, current, nil)
	if err != nil || runner == "" {
		return err // no control-plane node runs: the pool forms a cluster of its own version
	}
	res, err := c.RunShellScript(ctx, runner, "gpucluster-kubeadm-upgrade", spec.ClusterUpgrade, clusterUpgradeTimeout)
	if err == nil && res.Status != "Success" {
		err = fmt.Errorf("%s %s, exit code %d, output: %q", res.Status, res.ErrorCode, res.ExitCode, res.Output)
	}
	if err != nil {
		return fmt.Errorf("raising the cluster's Kubernetes version (kubeadm upgrade apply) on control-plane node %s before replacing the pool's nodes: %w. "+
			"No node was replaced: a control-plane node of a newer minor cannot join a cluster still recorded at the older one. "+
			"Check the output (etcd healthy, every control-plane node Ready, one minor at a time; %s), then apply again", runner, err, bootstrap.VersionSkewPolicy)
	}
	tflog.Info(ctx, fmt.Sprintf("node pool %s: %s", spec.PoolID, strings.TrimSpace(res.Output)))
	return nil
}
