# Settings every unit of the live stack includes: where state lives and how the provider is set up.
# Terragrunt reads this through `include "root"` in each unit; it is not a unit itself.

locals {
  region       = get_env("ALIBABA_CLOUD_REGION", "cn-wulanchabu")
  state_bucket = get_env("GPUCLUSTER_STATE_BUCKET", "gpucluster-tfstate-example")
}

# State in an OSS bucket (versioned, encrypted), one key per unit, locked through Tablestore.
# The CLIs' oss backend reads its own credentials: ALICLOUD_ACCESS_KEY / ALICLOUD_SECRET_KEY (or
# a profile), not the provider's ALIBABA_CLOUD_* variables. HashiCorp Terraform built from the
# module proxy has no oss backend (see README, "Terraform or OpenTofu"): use OpenTofu or a
# Terraform release binary for this stack.
remote_state {
  backend = "oss"
  generate = {
    path      = "backend.tf"
    if_exists = "overwrite_terragrunt"
  }
  config = {
    bucket              = local.state_bucket
    prefix              = "gpu-clusters/${path_relative_to_include()}"
    key                 = "terraform.tfstate"
    region              = local.region
    encrypt             = true
    tablestore_endpoint = "https://gpucluster-lock.${local.region}.ots.aliyuncs.com"
    tablestore_table    = "terraform_locks"
  }
}

# The provider block. Credentials come from the environment (ALIBABA_CLOUD_ACCESS_KEY_ID and
# ALIBABA_CLOUD_ACCESS_KEY_SECRET, or ALIBABA_CLOUD_PROFILE), never from this file.
generate "provider" {
  path      = "provider.tf"
  if_exists = "overwrite_terragrunt"
  contents  = <<-EOT
    provider "gpucluster" {
      region      = "${local.region}"
      max_retries = 8
      rate_limit  = 20
    }
  EOT
}

# Inputs every scenario module takes.
inputs = {
  admin_cidrs = ["10.99.0.0/24"]
  tags = {
    owner      = "research-platform"
    managed-by = "terragrunt"
  }
}
