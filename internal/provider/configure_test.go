package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

func fixedTimeout(d time.Duration) func(context.Context, time.Duration) (time.Duration, diag.Diagnostics) {
	return func(context.Context, time.Duration) (time.Duration, diag.Diagnostics) { return d, nil }
}

func TestStartOperation(t *testing.T) {
	var diags diag.Diagnostics
	if _, cancel, ok := startOperation(context.Background(), nil, "Creating X", fixedTimeout(time.Minute), time.Hour, &diags); ok {
		cancel()
		t.Fatal("an unconfigured provider went on")
	}
	if !diags.HasError() || !strings.Contains(diags[0].Summary(), "Creating X: provider not configured") {
		t.Errorf("diagnostics %v; want the operation named with 'provider not configured'", diags)
	}

	diags = nil
	ctx, cancel, ok := startOperation(context.Background(), &cloud.Client{}, "Creating X", fixedTimeout(time.Minute), time.Hour, &diags)
	defer cancel()
	deadline, has := ctx.Deadline()
	if !ok || diags.HasError() || !has || time.Until(deadline) > time.Minute {
		t.Errorf("ok=%v diags=%v deadline=%v (set %v); want the configured minute to bound the operation", ok, diags, deadline, has)
	}
}
