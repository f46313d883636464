# The id is the network's security group id; everything else is found from it.
terraform import gpucluster_rdma_network.training sg-0123456789abcdef
