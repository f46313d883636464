package alerting

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Grafana dashboard model: the subset of the dashboard JSON this package writes.
type dashboard struct {
	Title         string         `json:"title"`
	UID           string         `json:"uid"`
	Tags          []string       `json:"tags"`
	SchemaVersion int            `json:"schemaVersion"`
	Editable      bool           `json:"editable"`
	Refresh       string         `json:"refresh"`
	Time          map[string]any `json:"time"`
	Templating    templating     `json:"templating"`
	Panels        []panel        `json:"panels"`
}

type templating struct {
	List []templateVar `json:"list"`
}

type templateVar struct {
	Name       string      `json:"name"`
	Label      string      `json:"label"`
	Type       string      `json:"type"`
	Query      string      `json:"query"`
	Datasource *datasource `json:"datasource,omitempty"`
	IncludeAll bool        `json:"includeAll"`
	Multi      bool        `json:"multi"`
	AllValue   string      `json:"allValue,omitempty"`
	Refresh    int         `json:"refresh,omitempty"`
}

type panel struct {
	ID          int          `json:"id"`
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	GridPos     gridPos      `json:"gridPos"`
	Datasource  datasource   `json:"datasource"`
	Targets     []target     `json:"targets"`
	FieldConfig fieldConfig  `json:"fieldConfig"`
	Options     panelOptions `json:"options"`
}

type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type target struct {
	RefID        string     `json:"refId"`
	Expr         string     `json:"expr"`
	LegendFormat string     `json:"legendFormat"`
	Datasource   datasource `json:"datasource"`
}

type fieldConfig struct {
	Defaults  fieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

type fieldDefaults struct {
	Unit       string         `json:"unit"`
	Min        *float64       `json:"min,omitempty"`
	Max        *float64       `json:"max,omitempty"`
	Thresholds thresholds     `json:"thresholds"`
	Custom     map[string]any `json:"custom,omitempty"`
}

type thresholds struct {
	Mode  string `json:"mode"`
	Steps []step `json:"steps"`
}

// step.Value nil is Grafana's "base" step (minus infinity).
type step struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

type panelOptions struct {
	Legend  map[string]any `json:"legend,omitempty"`
	Tooltip map[string]any `json:"tooltip,omitempty"`
}

func f(v float64) *float64 { return &v }

var promDS = datasource{Type: "prometheus", UID: "${datasource}"}

// DashboardPanel describes one panel for callers and tests: its title and PromQL queries.
type DashboardPanel struct {
	Title   string
	Queries []string
}

// dashboardPanels is the dashboard's content: title, queries, unit and threshold steps.
func dashboardPanels(t Thresholds) []panel {
	line := map[string]any{"thresholdsStyle": map[string]any{"mode": "line+area"}, "lineWidth": 1, "fillOpacity": 0}
	mk := func(title, desc, unit string, lo, hi *float64, steps []step, targets ...target) panel {
		for i := range targets {
			targets[i].RefID = string(rune('A' + i))
			targets[i].Datasource = promDS
		}
		return panel{
			Type: "timeseries", Title: title, Description: desc, Datasource: promDS, Targets: targets,
			FieldConfig: fieldConfig{Defaults: fieldDefaults{Unit: unit, Min: lo, Max: hi,
				Thresholds: thresholds{Mode: "absolute", Steps: steps}, Custom: line}, Overrides: []any{}},
			Options: panelOptions{Legend: map[string]any{"displayMode": "table", "placement": "bottom", "calcs": []string{"mean", "max"}},
				Tooltip: map[string]any{"mode": "multi", "sort": "desc"}},
		}
	}
	host := `{Hostname=~"$node"}`
	return []panel{
		mk("GPU utilisation by pod", fmt.Sprintf("Average over %s of GPUs held by pods; red below the %s target of %d%%.", promDuration(UtilWindow), t.Scenario, t.GPUUtilBelowPercent),
			"percent", f(0), f(100),
			[]step{{"red", nil}, {"green", f(float64(t.GPUUtilBelowPercent))}},
			target{Expr: UtilExpr(), LegendFormat: "{{namespace}}/{{pod}}"}),
		mk("GPU utilisation by GPU", "Every GPU, held or idle.", "percent", f(0), f(100),
			[]step{{"red", nil}, {"green", f(float64(t.GPUUtilBelowPercent))}},
			target{Expr: MetricGPUUtil + host, LegendFormat: "{{Hostname}} GPU {{gpu}}"}),
		mk("GPU memory used", fmt.Sprintf("Used / (used + free) framebuffer; warning at %d%%, critical at %d%% for %s.", t.MemoryWarningPercent, t.MemoryCriticalPercent, promDuration(t.MemoryFor)),
			"percent", f(0), f(100),
			[]step{{"green", nil}, {"orange", f(float64(t.MemoryWarningPercent))}, {"red", f(float64(t.MemoryCriticalPercent))}},
			target{Expr: strings.ReplaceAll(MemoryUsedPercentExpr(), MetricFBUsed, MetricFBUsed+host), LegendFormat: "{{Hostname}} GPU {{gpu}}"}),
		mk("XID errors", "Last XID code per GPU; 0 means none. Codes "+strings.Trim(fmt.Sprint(CriticalXIDs), "[]")+" page the on-call.",
			"none", f(0), nil,
			[]step{{"green", nil}, {"red", f(1)}},
			target{Expr: MetricXID + host, LegendFormat: "{{Hostname}} GPU {{gpu}}"}),
		mk("Network throughput", fmt.Sprintf("Gbit/s on %s; bursts alert at %d%% of the %s Gbit/s design bandwidth (%s Gbit/s).",
			t.NetworkInterface, t.NetworkBurstPercent, num(t.DesignBandwidthGbps), num(t.BurstGbps())),
			"Gbits", f(0), f(t.DesignBandwidthGbps),
			[]step{{"green", nil}, {"red", f(t.BurstGbps())}},
			target{Expr: t.NetworkGbpsExpr("receive"), LegendFormat: "{{instance}} receive"},
			target{Expr: t.NetworkGbpsExpr("transmit"), LegendFormat: "{{instance}} transmit"}),
	}
}

// Panels lists the dashboard's panels and queries.
func Panels(t Thresholds) []DashboardPanel {
	var out []DashboardPanel
	for _, p := range dashboardPanels(t) {
		dp := DashboardPanel{Title: p.Title}
		for _, tg := range p.Targets {
			dp.Queries = append(dp.Queries, tg.Expr)
		}
		out = append(out, dp)
	}
	return out
}

// DashboardJSON is a Grafana dashboard (schema version 39, Grafana 10/11) for the scenario,
// with a Prometheus data source variable and a node filter.
func DashboardJSON(t Thresholds) (string, error) {
	panels := dashboardPanels(t)
	for i := range panels {
		panels[i].ID = i + 1
		panels[i].GridPos = gridPos{H: 8, W: 12, X: (i % 2) * 12, Y: (i / 2) * 8}
	}
	d := dashboard{
		Title:         "GPU cluster: " + t.Scenario,
		UID:           "gpucluster-" + strings.ReplaceAll(t.Scenario, "_", "-"),
		Tags:          []string{"gpucluster", "dcgm", t.Scenario},
		SchemaVersion: 39, Editable: true, Refresh: "1m",
		Time: map[string]any{"from": "now-6h", "to": "now"},
		Templating: templating{List: []templateVar{
			{Name: "datasource", Label: "Prometheus", Type: "datasource", Query: "prometheus"},
			{Name: "node", Label: "Node", Type: "query", Query: "label_values(" + MetricGPUUtil + ", Hostname)",
				Datasource: &promDS, IncludeAll: true, Multi: true, AllValue: ".*", Refresh: 2},
		}},
		Panels: panels,
	}
	b, err := json.MarshalIndent(d, "", "  ")
	return string(b), err
}
