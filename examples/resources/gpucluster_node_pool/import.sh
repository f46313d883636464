# The id is the pool id (np- and 12 hex digits), also the gpucluster:pool tag on every node.
# package_mirror is read back from the first node's user data (DescribeUserData).
terraform import gpucluster_node_pool.training np-0123456789ab
