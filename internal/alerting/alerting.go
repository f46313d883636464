// Package alerting builds the monitoring side of a GPU cluster for a research scenario:
// Prometheus alerting rule groups over dcgm-exporter and node-exporter metrics, an Alertmanager
// routing example and a Grafana dashboard. Pure Go: no I/O, no Terraform types.
//
// Thresholds are the scenarios' monitoring targets (internal/catalog/SOURCES.md section 2): GPU
// utilisation below the scenario's
// catalog.Scenario.GPUUtilAlertPercent, GPU memory warning at 90% and critical at 95% for 5
// minutes, network bursts at 80% of the design bandwidth (netplan.Plan.ComputeGbps by default).
package alerting

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// The monitoring targets that do not depend on the scenario.
const (
	MemoryWarningPercent  = 90
	MemoryCriticalPercent = 95
	MemoryFor             = 5 * time.Minute
	NetworkBurstPercent   = 80
)

// Decisions of this package, not targets: how long utilisation is averaged and must stay low
// before anyone is told (a training step or a checkpoint write dips utilisation for seconds to
// minutes), how long a burst must last, and how long metrics may be missing.
const (
	UtilWindow       = 30 * time.Minute
	UtilFor          = 15 * time.Minute
	NetworkFor       = 1 * time.Minute
	MetricsAbsentFor = 10 * time.Minute
)

// CriticalXIDs are NVIDIA XID codes that mean the GPU needs attention now (NVIDIA XID catalogue):
// 48 double-bit ECC, 63/64 row remapping, 74 NVLink error, 79 GPU fell off the bus, 92 high
// single-bit ECC rate, 94/95 contained/uncontained ECC error.
var CriticalXIDs = []int{48, 63, 64, 74, 79, 92, 94, 95}

// dcgm-exporter and node-exporter metric names.
const (
	MetricGPUUtil  = "DCGM_FI_DEV_GPU_UTIL"
	MetricFBUsed   = "DCGM_FI_DEV_FB_USED"
	MetricFBFree   = "DCGM_FI_DEV_FB_FREE"
	MetricXID      = "DCGM_FI_DEV_XID_ERRORS"
	metricNetRx    = "node_network_receive_bytes_total"
	metricNetTx    = "node_network_transmit_bytes_total"
	defaultNetwork = "eth0"
)

// Thresholds are the numbers one scenario alerts on.
type Thresholds struct {
	Scenario              string
	GPUUtilBelowPercent   int
	MemoryWarningPercent  int
	MemoryCriticalPercent int
	MemoryFor             time.Duration
	NetworkBurstPercent   int
	DesignBandwidthGbps   float64
	NetworkInterface      string
}

// Options select the scenario and the network the rules watch.
type Options struct {
	Scenario string
	// DesignBandwidthGbps is the bandwidth bursts are measured against; 0 means
	// netplan.Plan.ComputeGbps (the 100 Gbit/s target between compute nodes).
	DesignBandwidthGbps float64
	// NetworkInterface is the node-exporter device label; "" means eth0.
	NetworkInterface string
	// Overrides of the targets; 0 keeps the scenario's or the package's default.
	GPUUtilBelowPercent   int
	MemoryWarningPercent  int
	MemoryCriticalPercent int
	MemoryForMinutes      int
	NetworkBurstPercent   int
}

// orDefault returns v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// ForScenario returns the thresholds for a scenario.
func ForScenario(o Options) (Thresholds, error) {
	sc, err := catalog.LookupScenario(o.Scenario)
	if err != nil {
		return Thresholds{}, err
	}
	if o.DesignBandwidthGbps < 0 {
		return Thresholds{}, fmt.Errorf("design bandwidth %v Gbit/s is negative", o.DesignBandwidthGbps)
	}
	if o.DesignBandwidthGbps == 0 {
		o.DesignBandwidthGbps = float64(netplan.Plan.ComputeGbps)
	}
	if o.NetworkInterface == "" {
		o.NetworkInterface = defaultNetwork
	}
	if strings.ContainsAny(o.NetworkInterface, "\"\\{}`\n") {
		return Thresholds{}, fmt.Errorf("network interface %q is not a device name", o.NetworkInterface)
	}
	th := Thresholds{
		Scenario:              sc.Name,
		GPUUtilBelowPercent:   orDefault(o.GPUUtilBelowPercent, sc.GPUUtilAlertPercent),
		MemoryWarningPercent:  orDefault(o.MemoryWarningPercent, MemoryWarningPercent),
		MemoryCriticalPercent: orDefault(o.MemoryCriticalPercent, MemoryCriticalPercent),
		MemoryFor:             MemoryFor,
		NetworkBurstPercent:   orDefault(o.NetworkBurstPercent, NetworkBurstPercent),
		DesignBandwidthGbps:   o.DesignBandwidthGbps,
		NetworkInterface:      o.NetworkInterface,
	}
	if o.MemoryForMinutes != 0 {
		th.MemoryFor = time.Duration(o.MemoryForMinutes) * time.Minute
	}
	for name, v := range map[string]int{"gpu_util_below_percent": th.GPUUtilBelowPercent, "memory_warning_percent": th.MemoryWarningPercent,
		"memory_critical_percent": th.MemoryCriticalPercent, "network_burst_percent": th.NetworkBurstPercent} {
		if v < 1 || v > 100 {
			return Thresholds{}, planerr.Input(name, strconv.Itoa(v), "is not a percentage between 1 and 100", "give 1 to 100, or leave it unset for the scenario's threshold").WithSupported("1..100")
		}
	}
	if th.MemoryWarningPercent >= th.MemoryCriticalPercent {
		return Thresholds{}, planerr.Input("memory_warning_percent", strconv.Itoa(th.MemoryWarningPercent),
			fmt.Sprintf("must be below the critical threshold (memory_critical_percent %d)", th.MemoryCriticalPercent),
			"lower memory_warning_percent or raise memory_critical_percent").WithSupported(fmt.Sprintf("1..%d", th.MemoryCriticalPercent-1))
	}
	if th.MemoryFor < time.Minute {
		return Thresholds{}, planerr.Input("memory_for_minutes", strconv.Itoa(o.MemoryForMinutes), "is under one minute", "give at least 1").WithSupported("1 or more")
	}
	return th, nil
}

// RuleFile is a Prometheus rule file.
type RuleFile struct {
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is one rule group.
type RuleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []Rule `json:"rules"`
}

// Rule is an alerting rule (or, with Record set, a recording rule).
type Rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// promDuration renders a duration the way Prometheus writes it (30m, 5m, 1h).
func promDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	default:
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
}

// MemoryUsedPercentExpr is GPU memory used as a percentage of used + free framebuffer.
func MemoryUsedPercentExpr() string {
	return fmt.Sprintf("100 * %s / (%s + %s)", MetricFBUsed, MetricFBUsed, MetricFBFree)
}

// UtilExpr is the per-workload GPU utilisation averaged over UtilWindow, for GPUs that a pod
// holds (dcgm-exporter in Kubernetes mode labels those with namespace and pod; idle GPUs have
// no pod label and must not page anyone).
func UtilExpr() string {
	return fmt.Sprintf(`avg by (namespace, pod) (avg_over_time(%s{pod!=""}[%s]))`, MetricGPUUtil, promDuration(UtilWindow))
}

// NetworkGbpsExpr is a node's throughput in Gbit/s in one direction ("receive" or "transmit").
func (t Thresholds) NetworkGbpsExpr(direction string) string {
	metric := metricNetRx
	if direction == "transmit" {
		metric = metricNetTx
	}
	return fmt.Sprintf(`8 * rate(%s{device="%s"}[1m]) / 1e9`, metric, t.NetworkInterface)
}

// BurstGbps is the throughput at which the burst alert fires.
func (t Thresholds) BurstGbps() float64 {
	return t.DesignBandwidthGbps * float64(t.NetworkBurstPercent) / 100
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Rules returns the rule groups for the thresholds.
func Rules(t Thresholds) RuleFile {
	labels := func(severity, group string) map[string]string {
		return map[string]string{"severity": severity, "scenario": t.Scenario, "alertgroup": group}
	}
	gpuWho := "GPU {{ $labels.gpu }} on {{ $labels.Hostname }}{{ if $labels.pod }} (pod {{ $labels.namespace }}/{{ $labels.pod }}){{ end }}"
	var xidCritical []string
	for _, x := range CriticalXIDs {
		xidCritical = append(xidCritical, fmt.Sprintf("%s == %d", MetricXID, x))
	}
	xidList := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(CriticalXIDs)), ", "), "[]")
	prefix := "gpucluster-" + strings.ReplaceAll(t.Scenario, "_", "-")
	return RuleFile{Groups: []RuleGroup{
		{Name: prefix + "-gpu-utilisation", Rules: []Rule{{
			Alert:  "GPUUtilisationLow",
			Expr:   fmt.Sprintf("%s < %d", UtilExpr(), t.GPUUtilBelowPercent),
			For:    promDuration(UtilFor),
			Labels: labels("warning", "gpu-utilisation"),
			Annotations: map[string]string{
				"summary": fmt.Sprintf("GPU utilisation of pod {{ $labels.namespace }}/{{ $labels.pod }} is {{ $value | humanize }}%%, below the %s target of %d%%", t.Scenario, t.GPUUtilBelowPercent),
				"description": fmt.Sprintf("Averaged over %s and below %d%% for %s. Look for a data-loader or I/O bottleneck, "+
					"a straggler rank waiting in NCCL, or a job that holds GPUs it does not use.", promDuration(UtilWindow), t.GPUUtilBelowPercent, promDuration(UtilFor)),
			},
		}}},
		{Name: prefix + "-gpu-memory", Rules: []Rule{
			{
				Alert: "GPUMemoryHigh", Expr: fmt.Sprintf("%s >= %d", MemoryUsedPercentExpr(), t.MemoryWarningPercent), For: promDuration(t.MemoryFor),
				Labels: labels("warning", "gpu-memory"),
				Annotations: map[string]string{
					"summary":     fmt.Sprintf("%s uses {{ $value | humanize }}%% of its memory (warning at %d%%)", gpuWho, t.MemoryWarningPercent),
					"description": "Close to out-of-memory: reduce the batch size or enable gradient checkpointing. Memory in use on a GPU no pod holds is a leaked process.",
				},
			},
			{
				Alert: "GPUMemoryCritical", Expr: fmt.Sprintf("%s >= %d", MemoryUsedPercentExpr(), t.MemoryCriticalPercent), For: promDuration(t.MemoryFor),
				Labels: labels("critical", "gpu-memory"),
				Annotations: map[string]string{
					"summary":     fmt.Sprintf("%s uses {{ $value | humanize }}%% of its memory (critical at %d%%)", gpuWho, t.MemoryCriticalPercent),
					"description": "An out-of-memory failure is imminent.",
				},
			},
		}},
		{Name: prefix + "-gpu-health", Rules: []Rule{
			{
				Alert: "GPUXidError", Expr: MetricXID + " > 0", Labels: labels("warning", "gpu-health"),
				Annotations: map[string]string{
					"summary":     gpuWho + " reported XID {{ $value }}",
					"description": "See NVIDIA's XID catalogue for the code. Application XIDs (13, 31, 43) usually mean a bug in the job, not the GPU.",
				},
			},
			{
				Alert: "GPUXidCritical", Expr: strings.Join(xidCritical, " or "), Labels: labels("critical", "gpu-health"),
				Annotations: map[string]string{
					"summary":     gpuWho + " reported XID {{ $value }}, which needs the node drained",
					"description": "XIDs " + xidList + " are memory, NVLink or bus failures: cordon and drain the node, then reset the GPU or replace the instance.",
				},
			},
			{
				Alert: "GPUMetricsAbsent", Expr: "absent(" + MetricGPUUtil + ")", For: promDuration(MetricsAbsentFor), Labels: labels("warning", "gpu-health"),
				Annotations: map[string]string{
					"summary":     "No GPU metrics from dcgm-exporter",
					"description": "Prometheus has no " + MetricGPUUtil + " series: dcgm-exporter is down or not scraped, so the other GPU alerts cannot fire.",
				},
			},
		}},
		{Name: prefix + "-network", Rules: []Rule{
			t.networkRule("receive"), t.networkRule("transmit"),
		}},
		t.clusterHealthRules(prefix),
	}}
}

func (t Thresholds) networkRule(direction string) Rule {
	name := "NetworkReceiveBurst"
	if direction == "transmit" {
		name = "NetworkTransmitBurst"
	}
	return Rule{
		Alert: name, Expr: fmt.Sprintf("%s >= %s", t.NetworkGbpsExpr(direction), num(t.BurstGbps())), For: promDuration(NetworkFor),
		Labels: map[string]string{"severity": "warning", "scenario": t.Scenario, "alertgroup": "network"},
		Annotations: map[string]string{
			"summary": fmt.Sprintf("{{ $labels.instance }} %s {{ $value | humanize }} Gbit/s on %s, at least %d%% of the %s Gbit/s design bandwidth",
				map[string]string{"receive": "receives", "transmit": "sends"}[direction], t.NetworkInterface, t.NetworkBurstPercent, num(t.DesignBandwidthGbps)),
			"description": "Sustained bursts slow NCCL collectives and storage reads on the same link. eRDMA traffic bypasses the kernel and does not show in these counters.",
		},
	}
}

// RulesYAML renders the rule file.
func RulesYAML(t Thresholds) (string, error) {
	b, err := yaml.Marshal(Rules(t))
	return string(b), err
}
