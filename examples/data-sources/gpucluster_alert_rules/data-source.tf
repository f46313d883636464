data "gpucluster_alert_rules" "training" {
  scenario = "ai_training"
  # design_bandwidth_gbps = 100   # default: the network plan's compute-to-compute bandwidth
}

resource "local_file" "rules" {
  filename = "${path.module}/gpucluster-rules.yml"
  content  = data.gpucluster_alert_rules.training.rules_yaml
}

resource "local_file" "dashboard" {
  filename = "${path.module}/gpucluster-dashboard.json"
  content  = data.gpucluster_alert_rules.training.grafana_dashboard
}

output "thresholds" {
  description = "The alert thresholds the rules use."
  value       = data.gpucluster_alert_rules.training.thresholds
}
