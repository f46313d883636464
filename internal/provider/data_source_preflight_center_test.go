package provider_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// The stack's EIPs and load balancers are held to the Quota Center's eip_quota_instances_num and
// slb_quota_instances_num, read at plan through ListProductQuotas: beyond one the plan stops on
// its attribute, naming the quota code and the fix.
func TestAccPreflight_centerQuotas(t *testing.T) {
	for _, tc := range []struct {
		name     string
		quota    string
		limit    int
		old, new string // the change to preflightConfig that asks for more than the limit
		want     *regexp.Regexp
	}{
		{"eips", "eip_quota_instances_num", 2, "load_balancers ", "eips = 3\n  load_balancers ", phrases(
			"Preflight: the stack does not fit", `eips "3" needs 3 EIPs`,
			"the EIP quota (eip_quota_instances_num) is 2 with 0 in use: 2 available, 1 short",
			"raise the EIP quota (eip_quota_instances_num) to at least 3 in the Quota Center", "or lower eips by 1")},
		{"load balancers", "slb_quota_instances_num", 1, "load_balancers         = 1", "load_balancers = 2", phrases(
			"Preflight: the stack does not fit", `load_balancers "2" needs 2 load balancers`,
			"the CLB instance quota (slb_quota_instances_num) is 1 with 0 in use: 1 available, 1 short",
			"raise the CLB instance quota (slb_quota_instances_num) to at least 2 in the Quota Center")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emu := acctest.StartEmulator(t)
			if err := emu.SetQuotaCenter(map[string]int{tc.quota: tc.limit}); err != nil {
				t.Fatal(err)
			}
			base := preflightConfig(1, "")
			if !strings.Contains(base, tc.old) {
				t.Fatalf("preflightConfig no longer holds %q", tc.old)
			}
			expectPreflightError(t, emu, strings.Replace(base, tc.old, tc.new, 1), tc.want)
		})
	}
}
