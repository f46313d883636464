# What the provider's region has in stock now (DescribeAvailableResource).
data "gpucluster_instance_types" "in_stock" {
  gpu_model     = "A100"
  in_stock_only = true
}

# Ranked instance types for LLM training on A100-class GPUs, 4 nodes with RDMA between them,
# among the types the region has in stock.
data "gpucluster_scenario" "training" {
  name                   = "ai_training"
  gpu_model              = "A100"
  node_count             = 4
  erdma                  = true
  offered_instance_types = data.gpucluster_instance_types.in_stock.names
}

output "recommended_instance_type" {
  description = "The first-ranked instance type."
  value       = data.gpucluster_scenario.training.recommended_instance_type
}

output "why" {
  description = "Each scenario requirement met, missed or unknown with the figures, and any regional fallback."
  value       = data.gpucluster_scenario.training.why
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

# What the request itself needs to be told (substitutes, series requests, regional fallbacks,
# a network target no candidate meets).
output "request_findings" {
  description = "What the catalog says about the request itself."
  value       = [for f in data.gpucluster_scenario.training.findings : "${f.severity}: ${f.message}"]
}
