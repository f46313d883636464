# Alibaba Cloud: the region and credentials usually come from the environment
# (ALIBABA_CLOUD_REGION, ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET) or from a
# profile of ~/.aliyun/config.json.
provider "gpucluster" {
  region  = "cn-wulanchabu"
  profile = "research"

  max_retries = 8
  rate_limit  = 20
}
