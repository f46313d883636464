variable "ca_seed" {
  description = "The CA's seed, from the secret store (export it as TF_VAR_ca_seed)."
  type        = string
  sensitive   = true
  ephemeral   = true
}

# The CA, made from the seed: the state holds its certificate and hash only.
resource "gpucluster_cluster_ca" "cluster" {
  seed_wo         = var.ca_seed
  seed_wo_version = 1
}

# The same seed, turned back into the CA key, certificate key and join token for this run only.
# Opening fails unless the seed derives the certificate's key.
ephemeral "gpucluster_cluster_ca" "cluster" {
  seed     = var.ca_seed
  cert_pem = gpucluster_cluster_ca.cluster.cert_pem
}

# Its private_key_pem, certificate_key and join_token may go only to write-only arguments,
# provider configurations, other ephemeral resources and locals, never to state.
