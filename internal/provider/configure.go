package provider

import (
	"context"
	"fmt"

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
