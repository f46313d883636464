package provider

// Create-or-adopt, shared by every resource: each create carries a ClientToken derived from what
// identifies the request (cloud.CreateOrAdopt), so an apply interrupted after the service acted
// adopts what it made instead of duplicating it. Objects whose create takes no token are found
// by their tags instead (storage tier: file systems by gpucluster:storage-tier, buckets by name;
// node pool: nodes by gpucluster:pool-name and gpucluster:pool-network).
