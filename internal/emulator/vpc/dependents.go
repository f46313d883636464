package vpc

import (
	"sort"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Dependent is how a product above VPC keeps DeleteVpc and DeleteVSwitch from removing a network
// it still has records in. The product registers one from its init (RegisterDependent); VPC
// imports none of them, so the layering stays one way. A check gets the whole call, so a
// product finds its own records in the call's stores.
type Dependent struct {
	// Rank places the check among the others (lower first): the vendor names what still holds a
	// network in a fixed order, and the first holder found answers. See the Rank constants.
	Rank int
	// Vpc answers the error DeleteVpc gives while the product holds VPC id, nil when it holds none.
	Vpc func(c *core.Call, id string) *core.Error
	// VSwitch answers the error DeleteVSwitch gives while the product holds vSwitch id.
	VSwitch func(c *core.Call, id string) *core.Error
}

// The order in which DeleteVpc and DeleteVSwitch name what still holds a network, after the
// VPC API's own NAT gateways and SNAT entries. Instances come before the vSwitches and security
// groups because they hold those too; the vendor's DeleteVpc then names DependencyViolation
// .Instance, .VSwitch or .SecurityGroup.
const (
	RankLoadBalancers  = 10 // SLB
	RankInstances      = 20 // ECS instances
	RankVSwitches      = 30 // the VPC's own vSwitches (DeleteVpc only; registered by this package)
	RankSecurityGroups = 40 // ECS security groups
	RankFileSystems    = 50 // NAS file systems and mount targets
)

var dependents []Dependent

// RegisterDependent adds a product's dependency checks, kept in Rank order (registration order
// among equal ranks). Call it from an init.
func RegisterDependent(d Dependent) {
	dependents = append(dependents, d)
	sort.SliceStable(dependents, func(i, j int) bool { return dependents[i].Rank < dependents[j].Rank })
}

// VpcDependency answers the first registered check's error for a VPC still held, in Rank order.
func VpcDependency(c *core.Call, id string) *core.Error {
	for _, d := range dependents {
		if d.Vpc != nil {
			if e := d.Vpc(c, id); e != nil {
				return e
			}
		}
	}
	return nil
}

// VSwitchDependency answers the first registered check's error for a vSwitch still held.
func VSwitchDependency(c *core.Call, id string) *core.Error {
	for _, d := range dependents {
		if d.VSwitch != nil {
			if e := d.VSwitch(c, id); e != nil {
				return e
			}
		}
	}
	return nil
}

// Instance is what the VPC API reads of an ECS instance: an EIP bound to one reports its VPC
// and private address, and binding checks its status.
type Instance struct {
	Region, VpcID, IP string
	Status            string // as DescribeInstances answers it: Running, Stopped, ...
}

// Instances is how the VPC API reads ECS instances. ECS offers it from its init (UseInstances):
// ECS stands on VPC, so VPC cannot import it.
type Instances struct {
	// Find answers the instance id of the call's state, false when there is none.
	Find func(c *core.Call, id string) (Instance, bool)
	// InVSwitch counts the instances in a vSwitch (DescribeVSwitches' AvailableIpAddressCount).
	InVSwitch func(c *core.Call, vswID string) int
}

// instances is what ECS offered; without ECS (this package's own tests) no instance exists.
var instances = Instances{
	Find:      func(*core.Call, string) (Instance, bool) { return Instance{}, false },
	InVSwitch: func(*core.Call, string) int { return 0 },
}

// UseInstances tells the VPC API how to read ECS instances. Call it from an init.
func UseInstances(i Instances) { instances = i }
