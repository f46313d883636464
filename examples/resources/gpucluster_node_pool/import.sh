# The id is the pool id (np- and 12 hex digits), also the gpucluster:pool tag on every node.
terraform import gpucluster_node_pool.training np-0123456789ab
