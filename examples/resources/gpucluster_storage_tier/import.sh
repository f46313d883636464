# Hot and warm tiers import by file system id, the cold tier by bucket name.
terraform import gpucluster_storage_tier.hot cpfs-0123456789abcdef
terraform import gpucluster_storage_tier.warm 1ab2c3d4e5
terraform import gpucluster_storage_tier.cold train-cold-datasets-0001
