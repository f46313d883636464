# Ranked instance types for LLM training on A100-class GPUs, 4 nodes with RDMA between them.
data "gpucluster_scenario" "training" {
  name       = "ai_training"
  gpu_model  = "A100"
  node_count = 4
  erdma      = true
}

output "recommended_instance_type" {
  description = "The first-ranked instance type."
  value       = data.gpucluster_scenario.training.recommended_instance_type
}

output "candidates" {
  description = "Every candidate with its rank, eRDMA setting and main reason."
  value = [for c in data.gpucluster_scenario.training.candidates : {
    instance_type = c.instance_type
    rank          = c.rank
    enable_erdma  = c.enable_erdma
    why           = c.reasons[0]
  }]
}

# What the request itself needs to be told (substitutes, series requests, matrix contradictions).
output "request_findings" {
  description = "What the catalog says about the request itself."
  value       = [for f in data.gpucluster_scenario.training.findings : "${f.severity}: ${f.message}"]
}
