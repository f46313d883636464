package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// clientFromProviderData is what every resource and data source calls in Configure. Nil provider
// data is normal during validation (the provider is not configured yet), so it is not an error.
func clientFromProviderData(data any, diags *diag.Diagnostics) *cloud.Client {
	if data == nil {
		return nil
	}
	client, ok := data.(*cloud.Client)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *cloud.Client, got %T. This is a bug in the provider; please report it.", data))
		return nil
	}
	return client
}

// timeoutsAttribute is the `timeouts` attribute of every resource: the timeouts package's
// attribute with the description it leaves out.
func timeoutsAttribute(ctx context.Context) schema.Attribute {
	attr := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	nested, ok := attr.(schema.SingleNestedAttribute)
	if !ok {
		return attr
	}
	nested.MarkdownDescription = "How long create, update and delete may take, as Go durations such as `\"45m\"`. " +
		"A wait cut short leaves the resource in the state (tainted when it was being created), never orphaned in the cloud."
	return nested
}

// clientConfigured reports whether the provider handed this resource or data source a client;
// without one (only a bug in the provider gets here) the operation stops with an error.
func clientConfigured(c *cloud.Client, what string, diags *diag.Diagnostics) bool {
	if c != nil {
		return true
	}
	diags.AddError(what+": provider not configured", "The provider was not configured; this is a bug.")
	return false
}

// startOperation begins a create, update or delete: it needs a configured client and bounds ctx
// by the resource's timeout for the operation (timeout is the model's Timeouts.Create, .Update or
// .Delete; def applies when the configuration sets none). cancel is always safe to defer; ok is
// false when diags holds an error.
func startOperation(ctx context.Context, c *cloud.Client, what string,
	timeout func(context.Context, time.Duration) (time.Duration, diag.Diagnostics), def time.Duration,
	diags *diag.Diagnostics) (_ context.Context, cancel context.CancelFunc, ok bool) {
	if !clientConfigured(c, what, diags) {
		return ctx, func() {}, false
	}
	d, tdiags := timeout(ctx, def)
	diags.Append(tdiags...)
	if diags.HasError() {
		return ctx, func() {}, false
	}
	ctx, cancel = context.WithTimeout(ctx, d)
	return ctx, cancel, true
}
