package nodepool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// Replacing a control-plane node removes its etcd member (issue #31). kubeadm names each stacked
// etcd member after its node and nothing removes it when the instance goes; etcd then refuses to
// add the replacement's member ("etcdserver: unhealthy cluster") while the old one does not
// answer. So before a control-plane pool deletes nodes (a roll's wave, a shrink), the provider
// runs bootstrap.EtcdMemberRemoveScript on another running control-plane node through Cloud
// Assistant, naming the nodes that go. It does so while they still run and before they are
// deleted: if it fails, nothing is deleted and the apply stops with the command's outcome, and
// the next apply tries again. Pools that are not control planes, and a pool that is destroyed
// whole (the cluster goes with it), skip it.

// etcdRemoveTimeout bounds the command: etcdctl answers in seconds; the rest is Cloud Assistant
// delivering it.
const etcdRemoveTimeout = 2 * time.Minute

// RemoveEtcdMembers removes the etcd members of the nodes victims names, control-plane nodes of
// the pool (among current) about to be deleted, from a running control-plane node that stays:
// one of the pool's others, or else another pool's behind the control plane's load balancer.
//
// The command's outcome decides: the script ran and failed (etcdctl refused, a non-zero exit, a
// timeout while it ran) is an error and nothing is deleted; Cloud Assistant could not deliver it
// (no client running on the node, DeliveryTimeout) is a warning naming the members left, and the
// nodes go as they did before this step existed: the provider has no other way in.
func RemoveEtcdMembers(ctx context.Context, c *cloud.Client, spec Spec, current []cloud.Instance, victims []string) (warning string, err error) {
	if spec.Role != bootstrap.RoleControlPlane || len(victims) == 0 {
		return "", nil
	}
	var names []string
	for _, v := range current {
		if slices.Contains(victims, v.ID) && v.HostName != "" {
			names = append(names, strings.ToLower(v.HostName))
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	script, err := bootstrap.EtcdMemberRemoveScript(names)
	if err != nil {
		return "", err
	}
	runner, err := etcdRunner(ctx, c, spec, current, victims)
	if err != nil {
		return "", err
	}
	if runner == "" {
		tflog.Warn(ctx, fmt.Sprintf("node pool %s: no other control-plane node runs, so the etcd members of %s are left: the control plane is being replaced whole", spec.PoolID, strings.Join(names, ", ")))
		return "", nil
	}
	res, err := c.RunShellScript(ctx, runner, "gpucluster-etcd-member-remove", script, etcdRemoveTimeout)
	if err != nil {
		return "", fmt.Errorf("removing the etcd members of the control-plane nodes being replaced (%s): %w; no node was deleted", strings.Join(names, ", "), err)
	}
	if undelivered(res) {
		return fmt.Sprintf("the etcd members of %s were not removed: Cloud Assistant could not run the command on %s (%s %s). "+
			"Remove them on a control-plane node (etcdctl member remove, in the etcd container) before a replacement joins, or etcd refuses it",
			strings.Join(names, ", "), runner, res.Status, res.ErrorCode), nil
	}
	if res.Status != "Success" {
		return "", fmt.Errorf("removing the etcd members of the control-plane nodes being replaced (%s) on %s with Cloud Assistant (invocation %s): %s %s, exit code %d, output: %q. "+
			"No node was deleted: a replacement could not join etcd while their members remain. Check that the Cloud Assistant client runs on %s "+
			"(the vendor's public images carry it), then apply again",
			strings.Join(names, ", "), runner, res.InvokeID, res.Status, res.ErrorCode, res.ExitCode, res.Output, runner)
	}
	tflog.Info(ctx, fmt.Sprintf("node pool %s: etcd members removed on %s: %s", spec.PoolID, runner, strings.TrimSpace(res.Output)))
	return "", nil
}

// undelivered: the command never ran on the node (the DescribeInvocations reference's error
// codes for a client that is missing, silent or upgrading, and for a command not delivered).
func undelivered(r cloud.CommandResult) bool {
	return r.Status == "Aborted" || slices.Contains([]string{"ClientNotRunning", "ClientNotResponse", "ClientIsUpgrading", "ClientNeedUpgrade", "DeliveryTimeout"}, r.ErrorCode)
}

// etcdRunner picks the running control-plane node the removal runs on: the pool's own first,
// then another pool's behind the load balancer (otherPoolsNodes, as SyncBackends reads them);
// "" when none runs.
func etcdRunner(ctx context.Context, c *cloud.Client, spec Spec, current []cloud.Instance, going []string) (string, error) {
	for _, n := range withoutIDs(current, going) {
		if n.Status == "Running" {
			return n.ID, nil
		}
	}
	if spec.LoadBalancerID == "" {
		return "", nil
	}
	mine := map[string]bool{}
	for _, n := range current {
		mine[n.ID] = true
	}
	others, _, err := otherPoolsNodes(ctx, c, spec.LoadBalancerID, spec.PoolID, mine)
	if err != nil {
		return "", fmt.Errorf("finding a control-plane node to remove etcd members on: %w", err)
	}
	for _, n := range others {
		if n.Status == "Running" {
			return n.ID, nil
		}
	}
	return "", nil
}
