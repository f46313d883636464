# The simplest CA: a random ECDSA P-256 key, valid ten years. The private key, certificate key and
# join token are kept in state, marked sensitive: keep the state in an encrypted backend.
resource "gpucluster_cluster_ca" "cluster" {}

# Every joining node pins this hash (kubeadm join --discovery-token-ca-cert-hash).
output "ca_cert_hash" {
  description = "The hash every kubeadm join pins."
  value       = gpucluster_cluster_ca.cluster.ca_cert_hash
}

# Keeping the secrets out of state (OpenTofu >= 1.11, Terraform >= 1.11): the key follows from a
# seed kept in a secret store, given write-only. Make one with `openssl rand -hex 32` and export
# it as TF_VAR_ca_seed from the secret store in every run.
variable "ca_seed" {
  description = "The CA's seed, from the secret store (export it as TF_VAR_ca_seed)."
  type        = string
  sensitive   = true
  ephemeral   = true
}

resource "gpucluster_cluster_ca" "seeded" {
  key_algorithm   = "ECDSA-P256"
  validity_period = "87600h"

  seed_wo         = var.ca_seed
  seed_wo_version = 1 # change with the seed to replace the CA
}
