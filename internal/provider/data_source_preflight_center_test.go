package provider_test

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// The stack's EIPs are held to the Quota Center's eip_quota_instances_num, read at plan through
// ListProductQuotas: beyond it the plan stops on eips, naming the quota code and the fix.
func TestAccPreflight_eipQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetQuotaCenter(map[string]int{"eip_quota_instances_num": 2}); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(preflightConfig(1, ""), "load_balancers ", "eips = 3\n  load_balancers ", 1)
	expectPreflightError(t, emu, cfg, phrases(
		"Preflight: the stack does not fit", `eips "3" needs 3 EIPs`,
		"the EIP quota (eip_quota_instances_num) is 2 with 0 in use: 2 available, 1 short",
		"raise the EIP quota (eip_quota_instances_num) to at least 3 in the Quota Center", "or lower eips by 1"))
}

// The stack's load balancers are held to the Quota Center's slb_quota_instances_num.
func TestAccPreflight_clbQuota(t *testing.T) {
	emu := acctest.StartEmulator(t)
	if err := emu.SetQuotaCenter(map[string]int{"slb_quota_instances_num": 1}); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(preflightConfig(1, ""), "load_balancers         = 1", "load_balancers = 2", 1)
	expectPreflightError(t, emu, cfg, phrases(
		"Preflight: the stack does not fit", `load_balancers "2" needs 2 load balancers`,
		"the CLB instance quota (slb_quota_instances_num) is 1 with 0 in use: 1 available, 1 short",
		"raise the CLB instance quota (slb_quota_instances_num) to at least 2 in the Quota Center"))
}
