package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

func TestAccAlertRules_perScenario(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const config = `
data "gpucluster_alert_rules" "training" {
  scenario = "ai_training"
}
data "gpucluster_alert_rules" "cfd" {
  scenario              = "engineering_simulation"
  design_bandwidth_gbps = 25
}
data "gpucluster_alert_rules" "tuned" {
  scenario                = "molecular_dynamics"
  gpu_util_below_percent  = 60
  memory_warning_percent  = 80
  memory_critical_percent = 92
  memory_for_minutes      = 10
  network_burst_percent   = 70
}
`
	tr, cfd := "data.gpucluster_alert_rules.training", "data.gpucluster_alert_rules.cfd"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("thresholds"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"gpu_util_below_percent": knownvalue.Int64Exact(85), "memory_warning_percent": knownvalue.Int64Exact(90),
					"memory_critical_percent": knownvalue.Int64Exact(95), "memory_for_minutes": knownvalue.Int64Exact(5),
					"network_burst_percent": knownvalue.Int64Exact(80), "network_burst_gbps": knownvalue.Float64Exact(80),
				})),
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("design_bandwidth_gbps"), knownvalue.Float64Exact(100)),
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("rules_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`DCGM_FI_DEV_GPU_UTIL\{pod!=""\}\[30m\]\)\)\s+< 85`))),
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("alert_names"), knownvalue.ListSizeExact(11)),
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("alertmanager_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`receiver: gpu-oncall-pager`))),
				statecheck.ExpectKnownValue(tr, tfjsonpath.New("grafana_dashboard"), knownvalue.StringRegexp(regexp.MustCompile(`"uid": "gpucluster-ai-training"`))),
				statecheck.ExpectKnownValue(cfd, tfjsonpath.New("thresholds").AtMapKey("gpu_util_below_percent"), knownvalue.Int64Exact(70)),
				statecheck.ExpectKnownValue(cfd, tfjsonpath.New("thresholds").AtMapKey("network_burst_gbps"), knownvalue.Float64Exact(20)),
				statecheck.ExpectKnownValue(cfd, tfjsonpath.New("rules_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`>=\s+20\n`))),
				// Every threshold can be overridden, and the rules use the override.
				statecheck.ExpectKnownValue("data.gpucluster_alert_rules.tuned", tfjsonpath.New("thresholds"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"gpu_util_below_percent": knownvalue.Int64Exact(60), "memory_warning_percent": knownvalue.Int64Exact(80),
					"memory_critical_percent": knownvalue.Int64Exact(92), "memory_for_minutes": knownvalue.Int64Exact(10),
					"network_burst_percent": knownvalue.Int64Exact(70), "network_burst_gbps": knownvalue.Float64Exact(70),
				})),
				statecheck.ExpectKnownValue("data.gpucluster_alert_rules.tuned", tfjsonpath.New("rules_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`(?s)< 60.*for: 10m`))),
			},
		}},
	})
}

func TestAccAlertRules_errors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	for _, step := range []resource.TestStep{
		{Config: emu.Config() + `data "gpucluster_alert_rules" "x" { scenario = "weather" }`,
			ExpectError: regexp.MustCompile(`(?s)value must be one of.*ai_training`)},
		{Config: emu.Config() + `data "gpucluster_alert_rules" "x" {
  scenario          = "ai_training"
  network_interface = "eth0\"}"
}`, ExpectError: regexp.MustCompile(`(?s)is not a device name`)},
		{Config: emu.Config() + `data "gpucluster_alert_rules" "x" {
  scenario              = "ai_training"
  design_bandwidth_gbps = 0
}`, ExpectError: regexp.MustCompile(`(?s)design_bandwidth_gbps.*at least 1`)},
		{Config: emu.Config() + `data "gpucluster_alert_rules" "x" {
  scenario                = "ai_training"
  memory_warning_percent  = 96
}`, ExpectError: regexp.MustCompile(`(?s)memory_warning_percent.*must be below the critical`)},
		{Config: emu.Config() + `data "gpucluster_alert_rules" "x" {
  scenario               = "ai_training"
  gpu_util_below_percent = 140
}`, ExpectError: regexp.MustCompile(`(?s)gpu_util_below_percent.*between 1 and 100`)},
	} {
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheck(t) },
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
			Steps:                    []resource.TestStep{step},
		})
	}
}
