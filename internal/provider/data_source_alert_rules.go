package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

var _ datasource.DataSource = (*alertRulesDataSource)(nil)

func newAlertRulesDataSource() datasource.DataSource { return &alertRulesDataSource{} }

// alertRulesDataSource renders a scenario's monitoring: Prometheus rules, an Alertmanager route
// and a Grafana dashboard (internal/alerting). Offline: no API call.
type alertRulesDataSource struct{}

func (d *alertRulesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_alert_rules"
}

func (d *alertRulesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	intAttr := func(desc string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Monitoring for a research scenario over dcgm-exporter and node-exporter metrics: a Prometheus rule " +
			"file (GPU utilisation below the scenario's target, GPU memory warning and critical, XID errors, missing GPU metrics, " +
			"network bursts, ERROR lines in a node's bootstrap log `/var/log/gpu-cluster.log` (node-exporter's textfile collector, " +
			"fed by a sidecar of the module's node-exporter), the API server's P99 request latency above 200 ms), an Alertmanager configuration example that pages on critical alerts, and a Grafana dashboard with the " +
			"same thresholds. Utilisation alerts only count GPUs a pod holds (dcgm-exporter's Kubernetes mode labels them), so idle " +
			"capacity pages no one. Offline: no API call.",
		Attributes: map[string]schema.Attribute{
			"scenario": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Scenario. One of " + mdValues(catalog.ScenarioNames()) + ".",
				Validators:          []validator.String{stringvalidator.OneOf(catalog.ScenarioNames()...)},
			},
			"design_bandwidth_gbps": schema.Float64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: fmt.Sprintf("Bandwidth in Gbit/s that bursts are measured against. Default %d, the network plan's compute-to-compute bandwidth; "+
					"use the instance type's own figure where it is lower.", netplan.Plan.ComputeGbps),
				Validators: []validator.Float64{float64validator.AtLeast(1)},
			},
			"network_interface": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "node-exporter `device` label to watch. Default `eth0`.",
			},
			"gpu_util_below_percent": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Override: alert when GPU utilisation stays below this percentage. Default: the scenario's (85 for ai_training, 70 for the simulations).",
			},
			"memory_warning_percent": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: fmt.Sprintf("Override: GPU memory warning threshold, percent. Default %d.", alerting.MemoryWarningPercent),
			},
			"memory_critical_percent": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: fmt.Sprintf("Override: GPU memory critical threshold, percent; must be above the warning. Default %d.", alerting.MemoryCriticalPercent),
			},
			"memory_for_minutes": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: fmt.Sprintf("Override: how long memory must stay above a threshold before the alert fires. Default %d.", int(alerting.MemoryFor.Minutes())),
			},
			"network_burst_percent": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: fmt.Sprintf("Override: network burst threshold as a percentage of `design_bandwidth_gbps`. Default %d.", alerting.NetworkBurstPercent),
			},
			"thresholds": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The numbers the rules use.",
				Attributes: map[string]schema.Attribute{
					"gpu_util_below_percent":  intAttr("Utilisation alert threshold (from the scenario)."),
					"memory_warning_percent":  intAttr("GPU memory warning threshold."),
					"memory_critical_percent": intAttr("GPU memory critical threshold."),
					"memory_for_minutes":      intAttr("How long memory must stay above a threshold."),
					"network_burst_percent":   intAttr("Burst threshold as a percentage of `design_bandwidth_gbps`."),
					"network_burst_gbps":      schema.Float64Attribute{Computed: true, MarkdownDescription: "Burst threshold in Gbit/s."},
				},
			},
			"rules_yaml":        schema.StringAttribute{Computed: true, MarkdownDescription: "Prometheus rule file (`groups:`); passes `promtool check rules`."},
			"alertmanager_yaml": schema.StringAttribute{Computed: true, MarkdownDescription: "Alertmanager configuration example; replace the webhook URLs with your pager and chat integrations."},
			"grafana_dashboard": schema.StringAttribute{Computed: true, MarkdownDescription: "Grafana dashboard JSON (schema version 39)."},
			"alert_names":       schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Alert names in the rule file."},
		},
	}
}

type alertRulesModel struct {
	Scenario            types.String         `tfsdk:"scenario"`
	DesignBandwidthGbps types.Float64        `tfsdk:"design_bandwidth_gbps"`
	NetworkInterface    types.String         `tfsdk:"network_interface"`
	GPUUtilBelow        types.Int64          `tfsdk:"gpu_util_below_percent"`
	MemoryWarning       types.Int64          `tfsdk:"memory_warning_percent"`
	MemoryCritical      types.Int64          `tfsdk:"memory_critical_percent"`
	MemoryForMinutes    types.Int64          `tfsdk:"memory_for_minutes"`
	NetworkBurst        types.Int64          `tfsdk:"network_burst_percent"`
	Thresholds          *alertThresholdModel `tfsdk:"thresholds"`
	RulesYAML           types.String         `tfsdk:"rules_yaml"`
	AlertmanagerYAML    types.String         `tfsdk:"alertmanager_yaml"`
	GrafanaDashboard    types.String         `tfsdk:"grafana_dashboard"`
	AlertNames          []string             `tfsdk:"alert_names"`
}

type alertThresholdModel struct {
	GPUUtilBelow     types.Int64   `tfsdk:"gpu_util_below_percent"`
	MemoryWarning    types.Int64   `tfsdk:"memory_warning_percent"`
	MemoryCritical   types.Int64   `tfsdk:"memory_critical_percent"`
	MemoryForMinutes types.Int64   `tfsdk:"memory_for_minutes"`
	NetworkBurst     types.Int64   `tfsdk:"network_burst_percent"`
	NetworkBurstGbps types.Float64 `tfsdk:"network_burst_gbps"`
}

func (d *alertRulesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m alertRulesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := "Rendering alert rules for scenario " + m.Scenario.ValueString()
	th, err := alerting.ForScenario(alerting.Options{
		Scenario: m.Scenario.ValueString(), DesignBandwidthGbps: m.DesignBandwidthGbps.ValueFloat64(), NetworkInterface: m.NetworkInterface.ValueString(),
		GPUUtilBelowPercent: int(m.GPUUtilBelow.ValueInt64()), MemoryWarningPercent: int(m.MemoryWarning.ValueInt64()),
		MemoryCriticalPercent: int(m.MemoryCritical.ValueInt64()), MemoryForMinutes: int(m.MemoryForMinutes.ValueInt64()),
		NetworkBurstPercent: int(m.NetworkBurst.ValueInt64()),
	})
	if _, ok := planerr.As(err); ok {
		addPlanError(&resp.Diagnostics, err, summary)
		return
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("network_interface"), summary, err.Error()+"; use the interface name node-exporter reports, such as eth0")
		return
	}
	rules, err := alerting.RulesYAML(th)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	am, err := alerting.AlertmanagerYAML(th)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	dash, err := alerting.DashboardJSON(th)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	m.DesignBandwidthGbps = types.Float64Value(th.DesignBandwidthGbps)
	m.NetworkInterface = types.StringValue(th.NetworkInterface)
	m.Thresholds = &alertThresholdModel{
		GPUUtilBelow:     types.Int64Value(int64(th.GPUUtilBelowPercent)),
		MemoryWarning:    types.Int64Value(int64(th.MemoryWarningPercent)),
		MemoryCritical:   types.Int64Value(int64(th.MemoryCriticalPercent)),
		MemoryForMinutes: types.Int64Value(int64(th.MemoryFor.Minutes())),
		NetworkBurst:     types.Int64Value(int64(th.NetworkBurstPercent)),
		NetworkBurstGbps: types.Float64Value(th.BurstGbps()),
	}
	m.RulesYAML = types.StringValue(rules)
	m.AlertmanagerYAML = types.StringValue(am)
	m.GrafanaDashboard = types.StringValue(dash)
	m.AlertNames = nil
	for _, g := range alerting.Rules(th).Groups {
		for _, r := range g.Rules {
			m.AlertNames = append(m.AlertNames, r.Alert)
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
