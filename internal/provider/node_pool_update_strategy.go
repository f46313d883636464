package provider

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// update_strategy: how a roll replaces nodes. A wave's next one waits for its new nodes to join
// the cluster (internal/nodepool join_wait.go says why and how the provider sees a join) on a
// pool that renders the provider's node bootstrap, the only one whose nodes report a join. On
// the same pools each node a roll or a shrink stops first drains itself (internal/nodepool
// drain_first.go), for at most drain_timeout.

const (
	// defaultJoinTimeout bounds the wait for a wave's nodes: a GPU node's bootstrap takes 4-5
	// minutes to join from a stock image (the driver's build dominates), a baked image less; four
	// times that leaves room for a slow mirror without leaving a broken roll waiting for an hour.
	defaultJoinTimeout  = 20 * time.Minute
	maxStrategyDuration = 24 * time.Hour // join_timeout and drain_timeout
	// defaultDrainTimeout bounds how long a node about to be stopped waits for its pods'
	// PodDisruptionBudgets to let them go: a replica rescheduled onto the wave before needs its
	// node Ready, its image pulled and its readiness probe passed, minutes for a GPU image; a
	// budget that still refuses after 15 minutes is unlikely to relent by itself.
	defaultDrainTimeout = 15 * time.Minute
)

func updateStrategyAttribute() schema.Attribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: "How changes that need new machines (instance type, image, disks, user data, Kubernetes release) are rolled out.",
		Attributes: map[string]schema.Attribute{
			"max_unavailable": schema.Int64Attribute{
				Required: true,
				MarkdownDescription: "Most nodes replaced at once: each wave deletes this many outdated nodes and waits for their replacements to run. " +
					"A control-plane pool with the provider's bootstrap takes 1 only: each node takes an etcd member with it (see the Kubernetes upgrades guide).",
				Validators: []validator.Int64{int64validator.AtLeast(1)},
			},
			"join_timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "On a pool with `kubernetes` and the provider's bootstrap: how long a wave waits for its new nodes to join the cluster before the next wave " +
					"(on an autoscaling pool: before the outdated nodes go), a Go duration from `0s` to `24h`, default `20m`. The provider reads the join from each node's serial " +
					"console (ECS `GetInstanceConsoleOutput`, where the bootstrap reports its phases), so no more than `max_unavailable` nodes are ever out of the cluster; " +
					"a node that does not join in time stops the roll with an error naming it and its last bootstrap phase. `0s` rolls without waiting.",
			},
			"drain_timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "On a pool with `kubernetes` and the provider's bootstrap: how long each node a roll or a shrink is about to stop may take to drain " +
					"itself first, a Go duration from `0s` to `24h`, default `15m`. The node cordons itself and evicts its pods through the Eviction API with its kubelet's " +
					"credentials (run through Cloud Assistant), so PodDisruptionBudgets hold; the kubelet's graceful node shutdown that follows does not ask them. " +
					"Pods a budget still keeps after this time stop the apply before any node of the wave is stopped (the node is uncordoned), naming them. " +
					"`0s` stops nodes without draining them.",
			},
		},
	}
}

// checkJoinTimeout refuses a join_timeout that is not a duration from 0s to 24h.
func checkJoinTimeout(u *updateModel, diags *diag.Diagnostics) {
	if u != nil {
		checkStrategyDuration("join_timeout", u.JoinTimeout, "write it like \"20m\" or \"1h\" (\"0s\" rolls without waiting for the nodes to join)", "Invalid join timeout", diags)
	}
}

// checkDrainTimeout refuses a drain_timeout that is not a duration from 0s to 24h.
func checkDrainTimeout(u *updateModel, diags *diag.Diagnostics) {
	if u != nil {
		checkStrategyDuration("drain_timeout", u.DrainTimeout, "write it like \"15m\" or \"1h\" (\"0s\" stops nodes without draining them first)", "Invalid drain timeout", diags)
	}
}

// checkStrategyDuration refuses update_strategy.<attr> when it is not a Go duration from 0s to 24h.
func checkStrategyDuration(attr string, v types.String, fix, summary string, diags *diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(v.ValueString()); err != nil || d < 0 || d > maxStrategyDuration {
		addPlanError(diags, planerr.Input("update_strategy."+attr, v.ValueString(), "is not a Go duration from 0s to 24h", fix), summary)
	}
}

// drainTimeoutOf is how long a node the pool stops may take to drain itself: 0 for a pool without
// the provider's bootstrap (no kubelet credentials where the drain looks for them), else
// drain_timeout or its default.
func drainTimeoutOf(k *k8sModel, u *updateModel, bootstrapped types.Bool) time.Duration {
	var v types.String
	if u != nil {
		v = u.DrainTimeout
	}
	return strategyDuration(k, v, bootstrapped, defaultDrainTimeout)
}

// joinTimeoutOf is how long a wave of the pool waits for its nodes to join: 0 for a pool without
// the provider's bootstrap (its nodes report nothing), else join_timeout or its default.
func joinTimeoutOf(k *k8sModel, u *updateModel, bootstrapped types.Bool) time.Duration {
	var v types.String
	if u != nil {
		v = u.JoinTimeout
	}
	return strategyDuration(k, v, bootstrapped, defaultJoinTimeout)
}

// strategyDuration is a duration of update_strategy (v, checked at plan), def when unset; 0 for a
// pool without kubernetes or without the provider's bootstrap.
func strategyDuration(k *k8sModel, v types.String, bootstrapped types.Bool, def time.Duration) time.Duration {
	if k == nil || bootstrapped.Equal(types.BoolValue(false)) {
		return 0
	}
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	d, _ := time.ParseDuration(v.ValueString())
	return d
}
