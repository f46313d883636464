package vpc

import "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"

// Dependent is how a product above VPC keeps DeleteVpc and DeleteVSwitch from removing a network
// it still has records in. The product registers one from its init (RegisterDependent); VPC
// imports none of them, so the layering stays one way.
type Dependent struct {
	// Vpc answers the error DeleteVpc gives while the product holds VPC id, nil when it holds none.
	Vpc func(stores *core.Stores, id string) *core.Error
	// VSwitch answers the error DeleteVSwitch gives while the product holds vSwitch id.
	VSwitch func(stores *core.Stores, id string) *core.Error
}

var dependents []Dependent

// RegisterDependent adds a product's dependency checks. Call it from an init.
func RegisterDependent(d Dependent) { dependents = append(dependents, d) }

// VpcDependency answers the first registered product's error for a VPC it still holds.
func VpcDependency(stores *core.Stores, id string) *core.Error {
	for _, d := range dependents {
		if d.Vpc != nil {
			if e := d.Vpc(stores, id); e != nil {
				return e
			}
		}
	}
	return nil
}

// VSwitchDependency answers the first registered product's error for a vSwitch it still holds.
func VSwitchDependency(stores *core.Stores, id string) *core.Error {
	for _, d := range dependents {
		if d.VSwitch != nil {
			if e := d.VSwitch(stores, id); e != nil {
				return e
			}
		}
	}
	return nil
}
