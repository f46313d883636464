# Every A100 80 GB-class type with 8 GPUs per node, from the provider's built-in catalog (no API call).
data "gpucluster_gpu_catalog" "a100_8x" {
  gpu_model = "A100-80GB"
  min_gpus  = 8
}

# Types whose GPU has usable double precision, virtual machines only.
data "gpucluster_gpu_catalog" "fp64" {
  fp64       = true
  bare_metal = false
}

output "a100_8x_types" {
  description = "A100 80 GB-class instance types with at least 8 GPUs."
  value       = data.gpucluster_gpu_catalog.a100_8x.names
}

output "fp64_types" {
  description = "Virtual-machine types with usable double precision, with their GPU."
  value       = [for t in data.gpucluster_gpu_catalog.fp64.instance_types : "${t.name} (${t.gpu_model}, ${t.gpu_memory_gb} GB)"]
}

# Datasheet figures of the GPU behind the types.
output "a100_80gb_fp64_tflops" {
  description = "FP64 TFLOPS of the A100 80 GB from the datasheet."
  value       = one([for m in data.gpucluster_gpu_catalog.a100_8x.gpu_models : m.fp64_tflops if m.name == "A100-80GB"])
}
