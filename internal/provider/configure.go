package provider

import (
	"fmt"

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
