package emulator

// The products the Server serves. Each package registers its actions and its record store with
// package core from its init; importing it here is what puts it in the Server. A product still
// in this package (ECS, ESS) registers from its own file's init instead.
import (
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nas"
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/slb"
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/sts"
	_ "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)
