package provider

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// checkKubernetesUpgrade refuses at plan a change of the pool's Kubernetes release that kubeadm
// cannot make (bootstrap.CheckKubernetesUpgrade: a skipped minor, a downgrade), naming
// kubernetes.versions.kubernetes. A pool without Kubernetes before or after has nothing to upgrade.
func checkKubernetesUpgrade(ctx context.Context, plan, state *nodePoolModel, diags *diag.Diagnostics) {
	from, to, ok := kubernetesChange(ctx, plan, state, diags)
	if !ok {
		return
	}
	if err := bootstrap.CheckKubernetesUpgrade(from, to); err != nil {
		if pe, ok := planerr.As(err); ok {
			err = pe.Under("kubernetes.versions")
		}
		addPlanError(diags, err, "Kubernetes upgrade not possible")
	}
}

// warnAutoscaledWorkerUpgrade warns at plan when an autoscaling worker pool's Kubernetes minor
// rises (autoscaledUpgradeWarning).
func warnAutoscaledWorkerUpgrade(ctx context.Context, plan, state *nodePoolModel, role string, autoscaling bool, diags *diag.Diagnostics) {
	from, to, ok := kubernetesChange(ctx, plan, state, diags)
	if !ok {
		return
	}
	if w := autoscaledUpgradeWarning(role, autoscaling, from, to); w != "" {
		diags.AddAttributeWarning(path.Root("kubernetes").AtName("versions"), "Apply the control plane first", w)
	}
}

// autoscaledUpgradeWarning is the plan's warning for an autoscaling worker pool whose Kubernetes
// minor rises ("" for any other change or pool). From this apply on its scaling group launches
// nodes of the new minor (the roll's and the Cluster Autoscaler's), and a kubelet must not be
// newer than the API server (https://kubernetes.io/releases/version-skew-policy/#kubelet). A
// fixed worker pool can be ordered after the control plane with depends_on; an autoscaling pool
// whose scaling group the control plane's add-ons name (the scenario modules' Cluster
// Autoscaler) comes before the control plane, so its nodes would join a control plane of the
// older minor.
func autoscaledUpgradeWarning(role string, autoscaling bool, from, to bootstrap.Versions) string {
	if !autoscaling || role != bootstrap.RoleGPUWorker || !bootstrap.MinorRises(from, to) {
		return ""
	}
	return fmt.Sprintf("kubernetes.versions.kubernetes rises from %s to %s on an autoscaling pool: from this apply on its scaling group launches nodes whose "+
		"kubelet is %s, and a kubelet must not be newer than the API server (%s). Unless the control plane runs %s already, apply it first: "+
		"with the scenario modules, tofu apply -target on the control_plane and control_plane_join pools, then a plain apply (the upgrades guide); "+
		"with pools of your own, depends_on from this pool to the control-plane pools orders it too unless they name this pool's scaling group",
		from.WithDefaults().Kubernetes, to.WithDefaults().Kubernetes, to.WithDefaults().Kubernetes, bootstrap.VersionSkewPolicy, to.WithDefaults().Kubernetes)
}

// setClusterUpgrade gives a control-plane pool whose Kubernetes release changes the script that
// raises the cluster's version before its nodes roll (nodepool.RaiseClusterVersion). Only on a
// change: the script answers at once when the cluster is there already, but Cloud Assistant must
// still deliver it, and an unchanged release has nothing to raise.
func setClusterUpgrade(ctx context.Context, plan, state *nodePoolModel, spec *nodepool.Spec, region string, diags *diag.Diagnostics) {
	from, to, ok := kubernetesChange(ctx, plan, state, diags)
	if !ok || spec.Role != bootstrap.RoleControlPlane || from.WithDefaults().Kubernetes == to.WithDefaults().Kubernetes {
		return
	}
	script, err := bootstrap.KubeadmUpgradeScript(bootstrap.Options{Role: spec.Role, Versions: to, Region: region, PackageMirror: plan.PackageMirror.ValueString()})
	if err != nil {
		addPlanError(diags, err, "Kubernetes upgrade not possible")
		return
	}
	spec.ClusterUpgrade = script
}

// kubernetesChange is the pool's software versions in state and in the plan; ok is false when
// either is not known or the pool has no Kubernetes on one side.
func kubernetesChange(ctx context.Context, plan, state *nodePoolModel, diags *diag.Diagnostics) (from, to bootstrap.Versions, ok bool) {
	if state == nil {
		return from, to, false
	}
	before, _, d1 := state.nested(ctx)
	after, known, d2 := plan.nested(ctx)
	if d1.HasError() || d2.HasError() || !known || before.Kubernetes == nil || after.Kubernetes == nil ||
		before.Kubernetes.Versions.IsUnknown() || after.Kubernetes.Versions.IsUnknown() {
		return from, to, false
	}
	from, _, d := k8sSoftware(ctx, before.Kubernetes)
	diags.Append(d...)
	to, _, d = k8sSoftware(ctx, after.Kubernetes)
	diags.Append(d...)
	return from, to, !diags.HasError()
}

// checkControlPlaneWaves refuses a control-plane pool that would replace more than one node at
// a time: each replaced node takes an etcd member with it, and kubeadm upgrades control-plane
// nodes one at a time (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/),
// so a roll (a new instance type, image or Kubernetes release) goes node by node. A pool without
// the provider's bootstrap (bootstrapped false) runs what its own image runs, etcd perhaps apart
// from it: not checked.
func checkControlPlaneWaves(k *k8sModel, u *updateModel, bootstrapped bool, diags *diag.Diagnostics) {
	if !bootstrapped || k == nil || k.Role.ValueString() != bootstrap.RoleControlPlane || u == nil || u.MaxUnavailable.IsUnknown() || u.MaxUnavailable.ValueInt64() <= 1 {
		return
	}
	addPlanError(diags, planerr.Input("update_strategy.max_unavailable", strconv.FormatInt(u.MaxUnavailable.ValueInt64(), 10),
		"replaces that many control-plane nodes, and their etcd members, at once: etcd keeps its quorum and kubeadm upgrades the control plane only one node at a time",
		"set update_strategy.max_unavailable = 1 (or leave update_strategy out) on a control-plane pool"), "Control plane rolls one node at a time")
}
