package alerting

import (
	"fmt"
	"time"
)

// The checks research teams run on a cluster after deployment, as alerts: errors in a node's
// bootstrap log, and an API server whose slowest requests take too long.
const (
	// MetricLogErrorLines counts the lines containing ERROR in a node's bootstrap log
	// (/var/log/gpu-cluster.log, internal/bootstrap LogPath). node-exporter's textfile collector
	// serves it; a sidecar of the node-exporter DaemonSet writes it (internal/manifests).
	MetricLogErrorLines = "gpucluster_log_error_lines_total"
	// LogErrorWindow is how far back a new ERROR line is looked for: the counter is read every
	// 30 s, and a line must still page someone after a scrape or two is missed.
	LogErrorWindow = 15 * time.Minute

	// MetricAPIServerLatency is the API server's request latency histogram
	// (https://kubernetes.io/docs/reference/instrumentation/metrics/, apiserver_request_duration_seconds).
	MetricAPIServerLatency = "apiserver_request_duration_seconds_bucket"
	// APIServerP99Seconds is the research teams' target for the API server's 99th percentile
	// request latency: 200 ms. Kubernetes' own SLO for single-object calls is 1 s
	// (https://github.com/kubernetes/community/blob/master/sig-scalability/slos/api_call_latency.md);
	// a cluster far below its scale limits that needs a fifth of it is slow for a reason worth
	// knowing (etcd disk latency, an overloaded control-plane node).
	APIServerP99Seconds = 0.2
	// APIServerLatencyFor is how long the P99 must stay above the target: a burst of LISTs at a
	// job's start is not an incident.
	APIServerLatencyFor = 10 * time.Minute

	// MetricCertificateExpiry is a certificate's notAfter in Unix seconds, label certificate
	// (kubeadm's name: apiserver, etcd-server, ..., admin.conf for a kubeconfig's; kubelet-client), written on every node by
	// internal/bootstrap's certificate script into node-exporter's textfile directory.
	MetricCertificateExpiry = "gpucluster_certificate_expiry_timestamp_seconds"
	// CertificateExpiryWarning: kubeadm's certificates last a year and each control-plane node
	// renews them once they have under twice this left (internal/bootstrap CertRenewBefore,
	// daily), the kubelet rotates its own
	// (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/), so one with
	// under 30 days left means a renewal or rotation failed for a month, with a month left to
	// mend it.
	CertificateExpiryWarning = 30 * 24 * time.Hour
)

// APIServerP99Expr is the API server's 99th percentile request latency over 5 minutes, per
// control-plane instance, without WATCH and CONNECT (long-running by design; the upstream SLO
// excludes them too).
func APIServerP99Expr() string {
	return fmt.Sprintf(`histogram_quantile(0.99, sum by (instance, le) (rate(%s{job="apiserver", verb!~"WATCH|CONNECT"}[5m])))`, MetricAPIServerLatency)
}

// clusterHealthRules are the rule group of the checks after deployment.
func (t Thresholds) clusterHealthRules(prefix string) RuleGroup {
	labels := func(severity string) map[string]string {
		return map[string]string{"severity": severity, "scenario": t.Scenario, "alertgroup": "cluster-health"}
	}
	return RuleGroup{Name: prefix + "-cluster-health", Rules: []Rule{
		{
			Alert: "NodeBootstrapLogErrors", Expr: fmt.Sprintf("increase(%s[%s]) > 0", MetricLogErrorLines, promDuration(LogErrorWindow)),
			Labels: labels("warning"),
			Annotations: map[string]string{
				"summary": "{{ $labels.instance }} wrote {{ $value | humanize }} ERROR lines to /var/log/gpu-cluster.log in the last " + promDuration(LogErrorWindow),
				"description": "The node bootstrap logs every phase's output there (a failed phase, a kubeadm preflight [ERROR ...]). " +
					"Read it on the node (journalctl -u gpucluster-bootstrap shows the same run) or its serial console (ECS GetInstanceConsoleOutput).",
			},
		},
		{
			Alert: "APIServerLatencyHigh", Expr: fmt.Sprintf("%s > %s", APIServerP99Expr(), num(APIServerP99Seconds)), For: promDuration(APIServerLatencyFor),
			Labels: labels("warning"),
			Annotations: map[string]string{
				"summary": fmt.Sprintf("API server {{ $labels.instance }} answers its slowest 1%% of requests in {{ $value | humanizeDuration }}, above the %.0f ms target", APIServerP99Seconds*1000),
				"description": "WATCH and CONNECT excluded, over 5 minutes. Look at etcd's disk (etcd_disk_wal_fsync_duration_seconds), " +
					"the control-plane node's CPU, and clients listing large collections without a resourceVersion.",
			},
		},
		{
			Alert: "CertificateExpiringSoon", Expr: fmt.Sprintf("%s - time() < %.0f", MetricCertificateExpiry, CertificateExpiryWarning.Seconds()),
			Labels: labels("warning"),
			Annotations: map[string]string{
				"summary":     "{{ $labels.certificate }} certificate on {{ $labels.instance }} expires in {{ $value | humanizeDuration }}",
				"description": "Renewal failed: journalctl -u gpucluster-cert-renew, or -u kubelet for kubelet-client.",
			},
		},
	}}
}
