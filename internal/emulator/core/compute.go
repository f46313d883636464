package core

// Instance is what a product above ECS reads of an ECS instance: ESS counts a scaling group's
// members by it and answers DescribeScalingInstances from it; SLB checks a backend server by it.
type Instance struct {
	ID, Region, Zone, Type string
	VpcID                  string
	IP                     string // the primary private address
	Spot                   string // SpotStrategy as launched: NoSpot, SpotAsPriceGo, SpotWithPriceLimit
	Created                int64  // unix nanoseconds
	Status                 string // as DescribeInstances answers it: Pending, Running, ...
}

// SecurityGroup is what a product above ECS reads of a security group before it names one in
// launch settings.
type SecurityGroup struct {
	Region, VpcID string
}

// Compute is ECS as the products above it use it: ESS launches a scaling group's instances with
// RunInstances and releases them, SLB checks the instances it is given as backend servers. ECS
// registers it from its init (UseCompute). The core carries the contract so that no product
// imports ECS: ESS and SLB stand on ECS, and ECS's records stay ECS's.
type Compute struct {
	// Instance answers instance id of the call's state, whatever its region; false once released.
	Instance func(c *Call, id string) (Instance, bool)
	// Run is RunInstances with p as its request, in the call's region at the call's time: it
	// answers the ids launched, or the error RunInstances would.
	Run func(c *Call, p Params) ([]string, *Error)
	// Release releases an instance at once, as DeleteInstances with Force does.
	Release func(c *Call, id string)
	// SecurityGroup answers security group id of the call's state, whatever its region.
	SecurityGroup func(c *Call, id string) (SecurityGroup, bool)
	// CheckLaunch refuses what RunInstances would refuse of these launch settings whatever the
	// placement: the image (ImageId or ImageFamily, a custom image of the call's region too) and
	// the RAM role name.
	CheckLaunch func(c *Call, launch Params) *Error
	// InstanceType answers the catalog's name of type t ("ecs." prefixed) and whether the catalog
	// offers it.
	InstanceType func(t string) (string, bool)
	// CapacityRefusal says whether a RunInstances error code is the zone's or the quota's (out of
	// stock, not sold there, GPU quota), so another type or zone may still launch, rather than a
	// refusal of the launch settings themselves.
	CapacityRefusal func(code string) bool
}

// compute is what ECS offered; without ECS (a product's own tests) no instance exists and none
// launches.
var compute = Compute{
	Instance: func(*Call, string) (Instance, bool) { return Instance{}, false },
	Run: func(*Call, Params) ([]string, *Error) {
		return nil, Errf(500, "InternalError", "ECS is not part of this emulator.")
	},
	Release:         func(*Call, string) {},
	SecurityGroup:   func(*Call, string) (SecurityGroup, bool) { return SecurityGroup{}, false },
	CheckLaunch:     func(*Call, Params) *Error { return nil },
	InstanceType:    func(t string) (string, bool) { return t, false },
	CapacityRefusal: func(string) bool { return false },
}

// UseCompute tells the products above ECS how to reach it. ECS calls it from its init.
func UseCompute(c Compute) { compute = c }

// ECS answers what ECS offered with UseCompute.
func ECS() Compute { return compute }

// releaseHooks are what the products above ECS do when it releases an instance (WhenReleased).
var releaseHooks []func(s *Stores, instanceID string)

// WhenReleased adds what a product above ECS does to its records when ECS releases an instance
// (SLB takes it out of every backend list). Call it from an init.
func WhenReleased(f func(s *Stores, instanceID string)) { releaseHooks = append(releaseHooks, f) }

// Released runs every WhenReleased hook for an instance ECS has just released from s.
func Released(s *Stores, instanceID string) {
	for _, f := range releaseHooks {
		f(s, instanceID)
	}
}

// spotStock is how ECS finds the spot stock table (UseSpotStock).
var spotStock = func(*Stores) map[string]map[string]int { return nil }

// UseSpotStock tells ECS where the spot stock table of a state is: zone -> instance type -> spot
// instances left, types not listed having plenty. ESS keeps it (the state file has held it under
// ESS's key since spot mixes came with scaling groups) and registers it from its init;
// RunInstances draws spot launches from it and a released spot instance goes back to it.
func UseSpotStock(f func(*Stores) map[string]map[string]int) { spotStock = f }

// SpotStock answers the spot stock table of a state, nil when no product keeps one.
func SpotStock(s *Stores) map[string]map[string]int { return spotStock(s) }
