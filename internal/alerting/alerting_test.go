package alerting

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr/planerrtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

func requireTool(t *testing.T, tool, pkg string) string {
	t.Helper()
	return testtools.Require(t, tool, pkg)
}

func thresholdsFor(t *testing.T, scenario string) Thresholds {
	t.Helper()
	th, err := ForScenario(Options{Scenario: scenario})
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestForScenario ties the thresholds to the monitoring targets: utilisation below 85% for training and 70%
// for the two simulation scenarios (through the catalog), memory 90/95% for 5 minutes, bursts at
// 80% of 100 Gbit/s.
func TestForScenario(t *testing.T) {
	target := map[string]int{
		catalog.ScenarioAITraining:            85,
		catalog.ScenarioMolecularDynamics:     70,
		catalog.ScenarioEngineeringSimulation: 70,
	}
	if len(catalog.Scenarios()) != len(target) {
		t.Fatalf("catalog has %d scenarios, this test knows %d: add the new one", len(catalog.Scenarios()), len(target))
	}
	for _, sc := range catalog.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			th := thresholdsFor(t, sc.Name)
			if th.GPUUtilBelowPercent != sc.GPUUtilAlertPercent || th.GPUUtilBelowPercent != target[sc.Name] {
				t.Fatalf("utilisation threshold %d, catalog %d, target %d", th.GPUUtilBelowPercent, sc.GPUUtilAlertPercent, target[sc.Name])
			}
			if th.MemoryWarningPercent != 90 || th.MemoryCriticalPercent != 95 || promDuration(th.MemoryFor) != "5m" {
				t.Fatalf("memory thresholds %d/%d for %s", th.MemoryWarningPercent, th.MemoryCriticalPercent, th.MemoryFor)
			}
			if th.DesignBandwidthGbps != 100 || th.BurstGbps() != 80 || th.NetworkInterface != "eth0" {
				t.Fatalf("network: design %v, burst %v, interface %s", th.DesignBandwidthGbps, th.BurstGbps(), th.NetworkInterface)
			}
		})
	}
	tests := []struct {
		name    string
		opts    Options
		burst   float64
		wantErr string
	}{
		{"storage link", Options{Scenario: "ai_training", DesignBandwidthGbps: 25}, 20, ""},
		{"alias spelling", Options{Scenario: "AI-Training"}, 80, ""},
		{"unknown scenario", Options{Scenario: "weather"}, 0, "known scenarios"},
		{"negative bandwidth", Options{Scenario: "ai_training", DesignBandwidthGbps: -1}, 0, "negative"},
		{"injection in device", Options{Scenario: "ai_training", NetworkInterface: `eth0"}`}, 0, "device name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th, err := ForScenario(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || th.BurstGbps() != tt.burst {
				t.Fatalf("burst %v, err %v; want %v", th.BurstGbps(), err, tt.burst)
			}
		})
	}
}

func findRule(t *testing.T, rf RuleFile, alert string) Rule {
	t.Helper()
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == alert {
				return r
			}
		}
	}
	t.Fatalf("no rule %s", alert)
	return Rule{}
}

func TestRulesPerScenario(t *testing.T) {
	for _, sc := range catalog.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			rf := Rules(thresholdsFor(t, sc.Name))
			checks := []struct{ alert, expr, forDur, severity string }{
				{"GPUUtilisationLow", fmt.Sprintf(`avg by (namespace, pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[30m])) < %d`, sc.GPUUtilAlertPercent), "15m", "warning"},
				{"GPUMemoryHigh", "100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) >= 90", "5m", "warning"},
				{"GPUMemoryCritical", "100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) >= 95", "5m", "critical"},
				{"GPUXidError", "DCGM_FI_DEV_XID_ERRORS > 0", "", "warning"},
				{"NetworkReceiveBurst", `8 * rate(node_network_receive_bytes_total{device="eth0"}[1m]) / 1e9 >= 80`, "1m", "warning"},
				{"NetworkTransmitBurst", `8 * rate(node_network_transmit_bytes_total{device="eth0"}[1m]) / 1e9 >= 80`, "1m", "warning"},
			}
			for _, c := range checks {
				r := findRule(t, rf, c.alert)
				if r.Expr != c.expr || r.For != c.forDur || r.Labels["severity"] != c.severity || r.Labels["scenario"] != sc.Name {
					t.Errorf("%s = %q for %q labels %v; want %q for %q severity %s", c.alert, r.Expr, r.For, r.Labels, c.expr, c.forDur, c.severity)
				}
			}
			if x := findRule(t, rf, "GPUXidCritical").Expr; !strings.Contains(x, "DCGM_FI_DEV_XID_ERRORS == 79") {
				t.Errorf("GPUXidCritical = %q, want XID 79 among the codes", x)
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPromtoolCheckRules hands every scenario's rule file to promtool.
func TestPromtoolCheckRules(t *testing.T) {
	promtool := requireTool(t, "promtool", "prometheus")
	for _, sc := range catalog.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			doc, err := RulesYAML(thresholdsFor(t, sc.Name))
			if err != nil {
				t.Fatal(err)
			}
			p := writeFile(t, t.TempDir(), "rules.yml", doc)
			out, err := exec.Command(promtool, "check", "rules", p).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "SUCCESS: 11 rules found") {
				t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, doc)
			}
		})
	}
}

// Promtool unit-test file format.
type promTestFile struct {
	RuleFiles          []string   `json:"rule_files"`
	EvaluationInterval string     `json:"evaluation_interval"`
	Tests              []promTest `json:"tests"`
}

type promTest struct {
	Interval      string          `json:"interval"`
	InputSeries   []promSeries    `json:"input_series"`
	AlertRuleTest []promAlertTest `json:"alert_rule_test"`
}

type promSeries struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

type promAlertTest struct {
	EvalTime  string         `json:"eval_time"`
	AlertName string         `json:"alertname"`
	ExpAlerts []promExpAlert `json:"exp_alerts"`
}

type promExpAlert struct {
	ExpLabels      map[string]string `json:"exp_labels"`
	ExpAnnotations map[string]string `json:"exp_annotations"`
}

func series(name string, labels map[string]string) string {
	b, _ := json.Marshal(labels)
	// {"a":"b"} -> {a="b"}
	s := strings.NewReplacer(`":"`, `="`, `","`, `",`, `{"`, `{`).Replace(string(b))
	return name + s
}

var ifPod = regexp.MustCompile(`\{\{ if \$labels\.pod \}\}(.*?)\{\{ end \}\}`)

// expected builds the alert promtool must see: series labels plus the rule's labels, and the
// rule's annotations with the templates expanded for these labels and value.
func expected(r Rule, labels map[string]string, value string) promExpAlert {
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v
	}
	for k, v := range r.Labels {
		l[k] = v
	}
	a := map[string]string{}
	for k, tmpl := range r.Annotations {
		s := strings.NewReplacer("{{ $value | humanize }}", value, "{{ $value | humanizeDuration }}", value, "{{ $value }}", value).Replace(tmpl)
		s = ifPod.ReplaceAllStringFunc(s, func(m string) string {
			if labels["pod"] == "" {
				return ""
			}
			return ifPod.FindStringSubmatch(m)[1]
		})
		for lk, lv := range labels {
			s = strings.ReplaceAll(s, "{{ $labels."+lk+" }}", lv)
		}
		a[k] = s
	}
	return promExpAlert{ExpLabels: l, ExpAnnotations: a}
}

// TestPromtoolRuleBehaviour feeds synthetic dcgm-exporter and node-exporter series to the rules
// with `promtool test rules` and checks which alerts fire: the scenario's utilisation threshold,
// memory at 91% (warning only) and 96% (both) after 5 minutes and not before, critical and
// application XIDs, and bursts at 85% but not 50% of the design bandwidth.
func TestPromtoolRuleBehaviour(t *testing.T) {
	promtool := requireTool(t, "promtool", "prometheus")
	for _, sc := range catalog.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			th := thresholdsFor(t, sc.Name)
			rf := Rules(th)
			low, ok := sc.GPUUtilAlertPercent-5, sc.GPUUtilAlertPercent+5
			podLow := map[string]string{"gpu": "0", "Hostname": "n1", "namespace": "train", "pod": "low"}
			podOK := map[string]string{"gpu": "1", "Hostname": "n1", "namespace": "train", "pod": "busy"}
			idle := map[string]string{"gpu": "2", "Hostname": "n1"} // no pod: never alerts
			mem := func(gpu string) map[string]string { return map[string]string{"gpu": gpu, "Hostname": "n2"} }
			net := func(dev string) map[string]string { return map[string]string{"device": dev, "instance": "n3:9100"} }
			gbpsToBytesPerMin := func(g float64) string { return fmt.Sprintf("0+%.0fx30", g*1e9/8*60) }
			cert := func(instance, name string) map[string]string {
				return map[string]string{"instance": instance, "certificate": name}
			}
			const day = 86400

			in := []promSeries{
				{series(MetricGPUUtil, podLow), fmt.Sprintf("%dx60", low)},
				{series(MetricGPUUtil, podOK), fmt.Sprintf("%dx60", ok)},
				{series(MetricGPUUtil, idle), "0x60"},
				{series(MetricFBUsed, mem("0")), "96x20"}, {series(MetricFBFree, mem("0")), "4x20"},
				{series(MetricFBUsed, mem("1")), "91x20"}, {series(MetricFBFree, mem("1")), "9x20"},
				{series(MetricFBUsed, mem("2")), "80x20"}, {series(MetricFBFree, mem("2")), "20x20"},
				{series(MetricXID, mem("3")), "79x5"},
				{series(MetricXID, mem("4")), "13x5"},
				{series(MetricXID, mem("5")), "0x5"},
				{series(metricNetRx, net("eth0")), gbpsToBytesPerMin(0.85 * th.DesignBandwidthGbps)},
				{series(metricNetTx, net("eth0")), gbpsToBytesPerMin(0.5 * th.DesignBandwidthGbps)},
				{series(metricNetRx, net("docker0")), gbpsToBytesPerMin(th.DesignBandwidthGbps)},
				// Node n4 logs 3 ERROR lines at minute 6; n5 never does.
				{series(MetricLogErrorLines, map[string]string{"instance": "n4"}), "0x5 3x20"},
				{series(MetricLogErrorLines, map[string]string{"instance": "n5"}), "0x25"},
				// API server cp1 answers every request in (0.1 s, 0.5 s]: P99 0.496 s; cp2 in under 0.1 s.
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp1", "verb": "GET", "le": "0.1"}), "0x30"},
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp1", "verb": "GET", "le": "0.5"}), "0+60x30"},
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp1", "verb": "GET", "le": "+Inf"}), "0+60x30"},
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp2", "verb": "GET", "le": "0.1"}), "0+60x30"},
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp2", "verb": "GET", "le": "0.5"}), "0+60x30"},
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp2", "verb": "GET", "le": "+Inf"}), "0+60x30"},
				// A WATCH is long by design: never counted.
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp2", "verb": "WATCH", "le": "0.5"}), "0x30"},
				{series(MetricAPIServerLatency, map[string]string{"job": "apiserver", "instance": "cp2", "verb": "WATCH", "le": "+Inf"}), "0+60x30"},
				// At 5m (time() = 300) the apiserver certificate of cp1 has 20 days left, its
				// kubelet-client 60 days, cp2's apiserver certificate 30 days and a second: only
				// the first is under 30 days, then as at 0m.
				{series(MetricCertificateExpiry, cert("cp1", "apiserver")), fmt.Sprintf("%dx30", 20*day+300)},
				{series(MetricCertificateExpiry, cert("cp1", "kubelet-client")), fmt.Sprintf("%dx30", 60*day+300)},
				{series(MetricCertificateExpiry, cert("cp2", "apiserver")), fmt.Sprintf("%dx30", 30*day+301)},
			}
			tests := []promAlertTest{
				{"20m", "GPUUtilisationLow", []promExpAlert{expected(findRule(t, rf, "GPUUtilisationLow"),
					map[string]string{"namespace": "train", "pod": "low"}, fmt.Sprint(low))}},
				{"10m", "GPUUtilisationLow", nil}, // not yet 15 minutes
				{"4m", "GPUMemoryHigh", nil},
				{"4m", "GPUMemoryCritical", nil},
				{"10m", "GPUMemoryHigh", []promExpAlert{
					expected(findRule(t, rf, "GPUMemoryHigh"), mem("0"), "96"),
					expected(findRule(t, rf, "GPUMemoryHigh"), mem("1"), "91"),
				}},
				{"10m", "GPUMemoryCritical", []promExpAlert{expected(findRule(t, rf, "GPUMemoryCritical"), mem("0"), "96")}},
				{"1m", "GPUXidError", []promExpAlert{
					expected(findRule(t, rf, "GPUXidError"), mem("3"), "79"),
					expected(findRule(t, rf, "GPUXidError"), mem("4"), "13"),
				}},
				{"1m", "GPUXidCritical", []promExpAlert{expected(findRule(t, rf, "GPUXidCritical"), mem("3"), "79")}},
				{"5m", "NetworkReceiveBurst", []promExpAlert{expected(findRule(t, rf, "NetworkReceiveBurst"), net("eth0"), fmt.Sprintf("%.4g", 0.85*th.DesignBandwidthGbps))}},
				{"5m", "NetworkTransmitBurst", nil},
				{"5m", "GPUMetricsAbsent", nil},
				{"5m", "NodeBootstrapLogErrors", nil},
				{"10m", "NodeBootstrapLogErrors", []promExpAlert{expected(findRule(t, rf, "NodeBootstrapLogErrors"), map[string]string{"instance": "n4"}, "3")}},
				{"8m", "APIServerLatencyHigh", nil}, // not yet 10 minutes
				{"20m", "APIServerLatencyHigh", []promExpAlert{expected(findRule(t, rf, "APIServerLatencyHigh"), map[string]string{"instance": "cp1"}, "496ms")}},
				{"5m", "CertificateExpiringSoon", []promExpAlert{expected(findRule(t, rf, "CertificateExpiringSoon"), cert("cp1", "apiserver"), "20d 0h 0m 0s")}},
				{"0m", "CertificateExpiringSoon", []promExpAlert{expected(findRule(t, rf, "CertificateExpiringSoon"), cert("cp1", "apiserver"), "20d 0h 5m 0s")}},
			}
			dir := t.TempDir()
			rules, err := RulesYAML(th)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "rules.yml", rules)
			tf := promTestFile{RuleFiles: []string{"rules.yml"}, EvaluationInterval: "1m", Tests: []promTest{
				{Interval: "1m", InputSeries: in, AlertRuleTest: tests},
				// Without any GPU series the absence alert fires after 10 minutes.
				{Interval: "1m", InputSeries: []promSeries{{"up", "1x20"}}, AlertRuleTest: []promAlertTest{
					{"9m", "GPUMetricsAbsent", nil},
					{"11m", "GPUMetricsAbsent", []promExpAlert{expected(findRule(t, rf, "GPUMetricsAbsent"), nil, "1")}},
				}},
			}}
			b, err := yaml.Marshal(tf)
			if err != nil {
				t.Fatal(err)
			}
			p := writeFile(t, dir, "rules_test.yml", string(b))
			cmd := exec.Command(promtool, "test", "rules", p)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("promtool test rules: %v\n%s", err, out)
			}
		})
	}
}

// TestAlertmanagerConfig hands the routing example to amtool.
func TestAlertmanagerConfig(t *testing.T) {
	th := thresholdsFor(t, catalog.ScenarioAITraining)
	doc, err := AlertmanagerYAML(th)
	if err != nil {
		t.Fatal(err)
	}
	var back amConfig
	if err := yaml.UnmarshalStrict([]byte(doc), &back); err != nil {
		t.Fatal(err)
	}
	if back.Route.Routes[0].Receiver != ReceiverPager || back.Route.Routes[0].Matchers[0] != `severity="critical"` {
		t.Fatalf("critical alerts do not page: %+v", back.Route.Routes)
	}
	amtool := requireTool(t, "amtool", "prometheus-alertmanager")
	p := writeFile(t, t.TempDir(), "alertmanager.yml", doc)
	if out, err := exec.Command(amtool, "check-config", p).CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("amtool check-config: %v\n%s", err, out)
	}
	// amtool config routes test: which receiver a critical and a warning alert reach.
	for labels, want := range map[string]string{
		"severity=critical scenario=ai_training alertname=GPUMemoryCritical": ReceiverPager,
		"severity=warning scenario=ai_training alertname=GPUMemoryHigh":      ReceiverTeam,
	} {
		args := append([]string{"config", "routes", "test", "--config.file=" + p, "--verify.receivers=" + want}, strings.Fields(labels)...)
		if out, err := exec.Command(amtool, args...).CombinedOutput(); err != nil {
			t.Fatalf("amtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestDashboardJSON checks the Grafana dashboard: valid JSON that survives a Go YAML round trip
// unchanged, thresholds from the scenario, and queries promtool accepts.
func TestDashboardJSON(t *testing.T) {
	for _, sc := range catalog.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			th := thresholdsFor(t, sc.Name)
			doc, err := DashboardJSON(th)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid([]byte(doc)) {
				t.Fatal("dashboard is not valid JSON")
			}
			y, err := yaml.JSONToYAML([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			j, err := yaml.YAMLToJSON(y)
			if err != nil {
				t.Fatal(err)
			}
			var before, after any
			if err := json.Unmarshal([]byte(doc), &before); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(j, &after); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(before, after) {
				t.Fatal("dashboard changes in a JSON -> YAML -> JSON round trip")
			}
			var d dashboard
			dec := json.NewDecoder(strings.NewReader(doc))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&d); err != nil {
				t.Fatal(err)
			}
			if d.UID != "gpucluster-"+strings.ReplaceAll(sc.Name, "_", "-") || len(d.Panels) != 5 {
				t.Fatalf("uid %s, %d panels", d.UID, len(d.Panels))
			}
			util := d.Panels[0].FieldConfig.Defaults.Thresholds.Steps
			if len(util) != 2 || *util[1].Value != float64(sc.GPUUtilAlertPercent) {
				t.Fatalf("utilisation panel steps %+v, want the %d%% threshold", util, sc.GPUUtilAlertPercent)
			}
			memSteps := d.Panels[2].FieldConfig.Defaults.Thresholds.Steps
			if *memSteps[1].Value != 90 || *memSteps[2].Value != 95 {
				t.Fatalf("memory panel steps %+v", memSteps)
			}
			if *d.Panels[4].FieldConfig.Defaults.Thresholds.Steps[1].Value != 80 {
				t.Fatalf("network panel steps %+v", d.Panels[4].FieldConfig.Defaults.Thresholds.Steps)
			}
			// promtool parses each query as a recording rule.
			promtool := requireTool(t, "promtool", "prometheus")
			var rec RuleFile
			g := RuleGroup{Name: "dashboard-queries"}
			for i, p := range Panels(th) {
				for k, q := range p.Queries {
					g.Rules = append(g.Rules, Rule{Record: fmt.Sprintf("dashboard:panel%d:query%d", i, k), Expr: q})
				}
			}
			rec.Groups = append(rec.Groups, g)
			b, _ := yaml.Marshal(rec)
			path := writeFile(t, t.TempDir(), "queries.yml", string(b))
			if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
				t.Fatalf("dashboard queries: %v\n%s", err, out)
			}
		})
	}
}

func TestThresholdsOutOfRangeNameTheAttribute(t *testing.T) {
	for _, c := range []struct {
		name        string
		opts        Options
		path, value string
	}{
		{"percentage", Options{Scenario: "ai_training", GPUUtilBelowPercent: 101}, "gpu_util_below_percent", "101"},
		{"warning above critical", Options{Scenario: "ai_training", MemoryWarningPercent: 95, MemoryCriticalPercent: 90}, "memory_warning_percent", "95"},
		{"duration", Options{Scenario: "ai_training", MemoryForMinutes: -1}, "memory_for_minutes", "-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ForScenario(c.opts)
			planerrtest.AssertAttribute(t, err, c.path, c.value)
			if pe, _ := planerr.As(err); pe == nil || pe.Supported == "" {
				t.Errorf("%v names no supported range", err)
			}
		})
	}
}
