package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// checkKubernetesUpgrade refuses at plan a change of the pool's Kubernetes release that kubeadm
// cannot make (bootstrap.CheckKubernetesUpgrade: a skipped minor, a downgrade), naming
// kubernetes.versions.kubernetes. A pool without Kubernetes before or after has nothing to upgrade.
func checkKubernetesUpgrade(ctx context.Context, plan, state *nodePoolModel, diags *diag.Diagnostics) {
	if state == nil {
		return
	}
	before, _, d1 := state.nested(ctx)
	after, known, d2 := plan.nested(ctx)
	if d1.HasError() || d2.HasError() || !known || before.Kubernetes == nil || after.Kubernetes == nil ||
		before.Kubernetes.Versions.IsUnknown() || after.Kubernetes.Versions.IsUnknown() {
		return
	}
	from, _, d := k8sSoftware(ctx, before.Kubernetes)
	diags.Append(d...)
	to, _, d := k8sSoftware(ctx, after.Kubernetes)
	diags.Append(d...)
	if err := bootstrap.CheckKubernetesUpgrade(from, to); err != nil {
		if pe, ok := planerr.As(err); ok {
			err = pe.Under("kubernetes.versions")
		}
		addPlanError(diags, err, "Kubernetes upgrade not possible")
	}
}
