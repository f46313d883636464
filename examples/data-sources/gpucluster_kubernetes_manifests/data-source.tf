data "gpucluster_kubernetes_manifests" "training" {
  scenario      = "ai_training"
  node_count    = 4
  gpus_per_node = 8
  erdma         = true
  max_runtime   = "72h"

  # Scale an inference Deployment on its pods' GPU utilisation (served by prometheus-adapter).
  hpa = {
    deployment   = "inference"
    min_replicas = 1
    max_replicas = 4
  }
}

# Apply with `kubectl apply -f manifests.yaml`, or one kubernetes_manifest per document.
resource "local_file" "manifests" {
  filename = "${path.module}/manifests.yaml"
  content  = data.gpucluster_kubernetes_manifests.training.yaml
}
