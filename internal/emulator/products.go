package emulator

// The products the Server serves. Each package registers its actions and its record store with
// package core from its init; importing it here is what puts it in the Server.
import (
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"      // registers ECS's actions and store
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ess"      // registers ESS's actions and store
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/location" // registers the Location service's DescribeEndpoints
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nas"      // registers NAS's actions and store
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/quotas"   // registers the Quota Center's ListProductQuotas and store
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/slb"      // registers SLB's actions and store
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/sts"      // registers STS's actions and store
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"      // registers the VPC API's actions and store
)
