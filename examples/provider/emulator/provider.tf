# The offline emulator (go run ./cmd/gpucluster-emulator): one endpoint for every product and
# the only credentials it accepts.
provider "gpucluster" {
  region     = "cn-wulanchabu"
  endpoint   = "http://127.0.0.1:18686"
  access_key = "emulator"
  secret_key = "emulator-secret"
}
