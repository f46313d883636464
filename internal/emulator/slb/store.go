package slb

import (
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// storeName names the SLB records among the emulator's stores.
const storeName = "slb"

func init() { core.RegisterStore(storeName, func() core.Store { return &Store{} }) }

// Listener is one TCP listener of a load balancer (the emulator serves TCP listeners only).
type Listener struct {
	Port               int    `json:"port"`
	BackendPort        int    `json:"backend_port"`
	Bandwidth          int    `json:"bw"`
	Running            bool   `json:"running,omitempty"`
	Scheduler          string `json:"scheduler"`
	Desc               string `json:"desc,omitempty"`
	HealthCheck        string `json:"hc"` // on or off
	HealthCheckType    string `json:"hc_type"`
	HealthCheckPort    int    `json:"hc_port,omitempty"`
	HealthyThreshold   int    `json:"healthy"`
	UnhealthyThreshold int    `json:"unhealthy"`
	HealthCheckTimeout int    `json:"hc_timeout"`
	HealthCheckEvery   int    `json:"hc_interval"`
	Persistence        int    `json:"persistence,omitempty"`
	Established        int    `json:"established"`
}

// Backend is one backend server: an ECS instance, by id.
type Backend struct {
	ServerID string `json:"id"`
	Weight   int    `json:"weight"`
	Type     string `json:"type"`
	Desc     string `json:"desc,omitempty"`
}

// LoadBalancer is one Classic Load Balancer. It is active as soon as CreateLoadBalancer answers.
type LoadBalancer struct {
	ID               string      `json:"id"`
	Region           string      `json:"region"`
	Name             string      `json:"name,omitempty"`
	AddressType      string      `json:"addr_type"` // intranet or internet
	Address          string      `json:"addr"`
	VpcID            string      `json:"vpc,omitempty"`
	VSwitchID        string      `json:"vsw,omitempty"`
	MasterZone       string      `json:"zone"`
	SlaveZone        string      `json:"slave_zone,omitempty"`
	Spec             string      `json:"spec,omitempty"`
	ChargeType       string      `json:"charge"` // InstanceChargeType: PayBySpec or PayByCLCU
	NetCharge        string      `json:"net_charge"`
	Bandwidth        int         `json:"bw,omitempty"`
	DeleteProtection bool        `json:"delete_protection,omitempty"`
	Created          int64       `json:"created"`
	Listeners        []*Listener `json:"listeners,omitempty"`
	Backends         []Backend   `json:"backends,omitempty"`
	Tags             []core.Tag  `json:"tags,omitempty"`
}

// Store is the SLB records. Its JSON key "load_balancers" is the one the state file had before
// SLB had its own package.
type Store struct {
	LoadBalancers map[string]*LoadBalancer `json:"load_balancers,omitempty"`
}

// Init makes the map a state file without SLB keys left nil.
func (s *Store) Init() {
	if s.LoadBalancers == nil {
		s.LoadBalancers = map[string]*LoadBalancer{}
	}
}

// StoreIn answers the SLB store of a Server's stores.
func StoreIn(s *core.Stores) *Store { return core.StoreOf[*Store](s, storeName) }

// ForgetInstance is what the vendor does to load balancers when an ECS instance is released:
// the instance leaves every backend list.
func (s *Store) ForgetInstance(id string) {
	for _, lb := range s.LoadBalancers {
		for i, b := range lb.Backends {
			if b.ServerID == id {
				lb.Backends = append(lb.Backends[:i:i], lb.Backends[i+1:]...)
				break
			}
		}
	}
}

// VpcDependency is DeleteVpc's check for load balancers: one in the VPC answers
// DependencyViolation (the vendor's DeleteVpc documents no SLB-specific code).
func (s *Store) VpcDependency(vpcID string) *core.Error {
	for _, id := range core.SortedKeys(s.LoadBalancers) {
		if lb := s.LoadBalancers[id]; lb.VpcID == vpcID {
			return core.ErrDependency("VPC %s still has load balancer %s; delete it first.", vpcID, lb.ID)
		}
	}
	return nil
}

// VSwitchDependency is DeleteVSwitch's check: a load balancer in the vSwitch answers
// DependencyViolation.
func (s *Store) VSwitchDependency(vswID string) *core.Error {
	for _, id := range core.SortedKeys(s.LoadBalancers) {
		if lb := s.LoadBalancers[id]; lb.VSwitchID == vswID {
			return core.ErrDependency("vSwitch %s still has load balancer %s; delete it first.", vswID, lb.ID)
		}
	}
	return nil
}

// A load balancer holds its VPC and vSwitch: the VPC API's DeleteVpc and DeleteVSwitch refuse
// while one is in them, after the VPC's own NAT gateways and before ECS instances. Its backend
// servers are ECS instances, which SLB reads through the core (core.ECS) and forgets when ECS
// releases one (core.WhenReleased).
func init() {
	core.WhenReleased(func(s *core.Stores, id string) { StoreIn(s).ForgetInstance(id) })
	emuvpc.RegisterDependent(emuvpc.Dependent{Rank: emuvpc.RankLoadBalancers,
		Vpc:     func(c *core.Call, id string) *core.Error { return StoreIn(c.Stores).VpcDependency(id) },
		VSwitch: func(c *core.Call, id string) *core.Error { return StoreIn(c.Stores).VSwitchDependency(id) },
	})
}
