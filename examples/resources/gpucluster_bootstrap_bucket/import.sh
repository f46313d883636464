# Import by bucket name; the readers are read back from the bucket policy.
terraform import gpucluster_bootstrap_bucket.bundles train-bootstrap-0001
