package alerting

import (
	"sigs.k8s.io/yaml"
)

// Receiver names in the Alertmanager example.
const (
	ReceiverPager = "gpu-oncall-pager"
	ReceiverTeam  = "gpu-team-chat"
)

type amConfig struct {
	Route        amRoute     `json:"route"`
	Receivers    []amRecv    `json:"receivers"`
	InhibitRules []amInhibit `json:"inhibit_rules"`
}

type amRoute struct {
	Receiver       string    `json:"receiver,omitempty"`
	GroupBy        []string  `json:"group_by,omitempty"`
	GroupWait      string    `json:"group_wait,omitempty"`
	GroupInterval  string    `json:"group_interval,omitempty"`
	RepeatInterval string    `json:"repeat_interval,omitempty"`
	Matchers       []string  `json:"matchers,omitempty"`
	Continue       bool      `json:"continue,omitempty"`
	Routes         []amRoute `json:"routes,omitempty"`
}

type amRecv struct {
	Name           string      `json:"name"`
	WebhookConfigs []amWebhook `json:"webhook_configs,omitempty"`
}

type amWebhook struct {
	URL          string `json:"url"`
	SendResolved bool   `json:"send_resolved"`
}

type amInhibit struct {
	SourceMatchers []string `json:"source_matchers"`
	TargetMatchers []string `json:"target_matchers"`
	Equal          []string `json:"equal"`
}

// AlertmanagerYAML is an Alertmanager configuration example for the rules: critical alerts page
// the on-call (repeat hourly), warnings go to the team channel, and a critical memory or XID
// alert silences the warning for the same GPU. The webhook URLs are placeholders to replace
// with a PagerDuty, DingTalk or chat integration.
func AlertmanagerYAML(t Thresholds) (string, error) {
	scenario := `scenario="` + t.Scenario + `"`
	cfg := amConfig{
		Route: amRoute{
			Receiver: ReceiverTeam, GroupBy: []string{"alertname", "scenario", "Hostname"},
			GroupWait: "30s", GroupInterval: "5m", RepeatInterval: "12h",
			Routes: []amRoute{
				{Receiver: ReceiverPager, Matchers: []string{`severity="critical"`, scenario}, RepeatInterval: "1h"},
				{Receiver: ReceiverTeam, Matchers: []string{`severity="warning"`, scenario}},
			},
		},
		Receivers: []amRecv{
			{Name: ReceiverPager, WebhookConfigs: []amWebhook{{URL: "http://alert-gateway.example.internal/pager", SendResolved: true}}},
			{Name: ReceiverTeam, WebhookConfigs: []amWebhook{{URL: "http://alert-gateway.example.internal/chat", SendResolved: true}}},
		},
		InhibitRules: []amInhibit{
			{SourceMatchers: []string{`severity="critical"`, `alertgroup="gpu-memory"`}, TargetMatchers: []string{`severity="warning"`, `alertgroup="gpu-memory"`}, Equal: []string{"Hostname", "gpu"}},
			{SourceMatchers: []string{`alertname="GPUXidCritical"`}, TargetMatchers: []string{`alertname="GPUXidError"`}, Equal: []string{"Hostname", "gpu"}},
		},
	}
	b, err := yaml.Marshal(cfg)
	return string(b), err
}
