// Package ecs is the emulator's ECS API (2014-05-26): instances and their lifecycle, security
// groups, deployment sets, HPC clusters, launch templates, the instance-type catalog with stock
// and prices, the instances' console output and the ECS tag API. It stands on package vpc (an
// instance is placed in a vSwitch) and offers the products above it what they need of ECS: the
// VPC API its instances and its DeleteVpc checks (vpc.UseInstances, vpc.RegisterDependent), and
// ESS and SLB instances through the core (core.UseCompute; core.Released tells them of a release).
package ecs

import (
	"sort"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Version is the ECS API version the emulator serves.
const Version = "2014-05-26"

// storeName names the ECS records among the emulator's stores.
const storeName = "ecs"

func init() { core.RegisterStore(storeName, func() core.Store { return &Store{} }) }

// The model types below are the emulator's own compact records: they hold
// only what the API can return, so 100,000 instances fit in little memory.
// Responses are built from them into the SDK's structs at call time.

type disk struct {
	Category string `json:"cat"`
	PL       string `json:"pl,omitempty"`
	Size     int    `json:"size"`
	Iops     int    `json:"iops,omitempty"`
	Burst    bool   `json:"burst,omitempty"`
	Name     string `json:"name,omitempty"`
	Delete   bool   `json:"del,omitempty"`
	Snapshot string `json:"snap,omitempty"` // the snapshot the disk was made from
}

type nic struct {
	Index     int      `json:"idx"`
	ID        string   `json:"id"`
	Mode      string   `json:"mode,omitempty"`
	VSwitchID string   `json:"vsw"`
	IP        string   `json:"ip"`
	SGs       []string `json:"sgs,omitempty"`
}

// instance phases; the visible Status is derived from phase and elapsed time
// (see status), so no goroutine has to tick instances along.
const (
	phaseBoot     = "boot"     // Pending -> Starting -> Running
	phaseStarting = "starting" // Starting -> Running
	phaseStopping = "stopping" // Stopping -> Stopped
	// phaseShutdown: a normal StopInstances signalled a guest that delays its shutdown
	// (ShutdownDelay): Stopping until the guest powers off (PowerOffFromGuest) or its delay runs
	// out, then Stopping -> Stopped as after phaseStopping.
	phaseShutdown = "shutdown"
)

type instance struct {
	ID          string     `json:"id"`
	Seq         uint64     `json:"seq"`
	Region      string     `json:"region"`
	Zone        string     `json:"zone"`
	Type        string     `json:"type"`
	Image       string     `json:"image"`
	Name        string     `json:"name,omitempty"`
	HostName    string     `json:"host,omitempty"`
	Desc        string     `json:"desc,omitempty"`
	Phase       string     `json:"phase"`
	PhaseAt     int64      `json:"phase_at"` // unix nanoseconds
	Created     int64      `json:"created"`  // unix nanoseconds
	VSwitchID   string     `json:"vsw"`
	VpcID       string     `json:"vpc"`
	IP          string     `json:"ip"`
	PublicIP    string     `json:"public_ip,omitempty"` // with InternetMaxBandwidthOut > 0
	SGs         []string   `json:"sgs"`
	Tags        []core.Tag `json:"tags,omitempty"`
	Spot        string     `json:"spot,omitempty"`
	AutoRelease int64      `json:"auto_release,omitempty"` // unix seconds
	DeploySet   string     `json:"ds,omitempty"`
	Hpc         string     `json:"hpc,omitempty"`
	SysDisk     disk       `json:"sys"`
	DataDisks   []disk     `json:"data,omitempty"`
	NICs        []nic      `json:"nics,omitempty"`
	UserData    string     `json:"user_data,omitempty"`
	ChargeType  string     `json:"charge,omitempty"`
	KeyPair     string     `json:"key,omitempty"`
	RamRole     string     `json:"ram_role,omitempty"` // instance RAM role (RunInstances RamRoleName)
	StoppedMode string     `json:"stopped_mode,omitempty"`
	// ShutdownDelay is how long the guest may delay a normal shutdown, in nanoseconds (0: it
	// powers off at once): set by a model of the guest (DelayGuestShutdown), as the kubelet's
	// graceful node shutdown takes a systemd inhibitor lock of that length.
	ShutdownDelay int64 `json:"shutdown_delay,omitempty"`
	// GPUFaults are the faults injected into its GPUs (gpu_faults.go), by GPU index.
	GPUFaults []GPUFault `json:"gpu_faults,omitempty"`
}

type rule struct {
	ID        string `json:"id"`
	Direction string `json:"dir"`
	Protocol  string `json:"proto"`
	PortRange string `json:"ports"`
	Cidr      string `json:"cidr,omitempty"`
	Ipv6Cidr  string `json:"cidr6,omitempty"`
	Prefix    string `json:"prefix,omitempty"`
	Group     string `json:"group,omitempty"`
	Policy    string `json:"policy"`
	Priority  int    `json:"prio"`
	Desc      string `json:"desc,omitempty"`
	Created   int64  `json:"created"`
}

type securityGroup struct {
	ID      string     `json:"id"`
	Region  string     `json:"region"`
	VpcID   string     `json:"vpc"`
	Name    string     `json:"name,omitempty"`
	Desc    string     `json:"desc,omitempty"`
	Type    string     `json:"type"`
	Created int64      `json:"created"`
	Rules   []rule     `json:"rules,omitempty"`
	Tags    []core.Tag `json:"tags,omitempty"`
}

type deploymentSet struct {
	ID       string `json:"id"`
	Region   string `json:"region"`
	Name     string `json:"name,omitempty"`
	Desc     string `json:"desc,omitempty"`
	Strategy string `json:"strategy"`
	Zone     string `json:"zone,omitempty"` // LowLatency: zone of its first member
	Created  int64  `json:"created"`
}

// eniTags are the tags of one network interface. Interfaces live inside their
// instance record; only the few that carry tags get an entry here.
type eniTags struct {
	Instance string     `json:"instance"`
	Tags     []core.Tag `json:"tags"`
}

type hpcCluster struct {
	ID     string `json:"id"`
	Region string `json:"region"`
	Name   string `json:"name"`
	Desc   string `json:"desc,omitempty"`
}

// Store is the ECS records. Its JSON keys are the ones the state file had before ECS had its own
// package, spliced into the state file's top level beside the other products'.
type Store struct {
	Instances map[string]*instance       `json:"instances"`
	SGs       map[string]*securityGroup  `json:"security_groups"`
	DSets     map[string]*deploymentSet  `json:"deployment_sets"`
	Hpcs      map[string]*hpcCluster     `json:"hpc_clusters"`
	Capacity  map[string]map[string]int  `json:"capacity"`
	ENITags   map[string]*eniTags        `json:"eni_tags,omitempty"` // tags of network interfaces, by ENI id
	Templates map[string]*launchTemplate `json:"launch_templates,omitempty"`
	Images    map[string]*imageRecord    `json:"images,omitempty"` // custom images (images.go), by id
	// Unavailable marks instance types a zone does not sell: zone -> type ("*" for every
	// type) -> the stock-out code RunInstances answers (see UnavailableTable).
	Unavailable map[string]map[string]string `json:"unavailable,omitempty"`
	// NoSpot lists the instance types sold pay-as-you-go only (see NoSpotList).
	NoSpot []string `json:"no_spot,omitempty"`
	// Quotas are the quotas PUT /_emulator/quotas set; nil keeps the defaults (see quotas.go).
	Quotas *Quotas `json:"quotas,omitempty"`
	// Invocations are the Cloud Assistant commands RunCommand started, by InvokeId
	// (cloud_assistant.go).
	Invocations map[string]*invocation `json:"invocations,omitempty"`
	// PendingGPUFaults are GPU faults held for the next instance launched (gpu_faults.go,
	// NextInstance), by GPU index.
	PendingGPUFaults []GPUFault `json:"pending_gpu_faults,omitempty"`

	order     []*instance                   // live instances ordered by Seq
	byTag     map[string]map[*instance]bool // "key\x00value" and "key\x00*" -> instances
	byVSwitch map[string]map[*instance]bool
	refs      map[string]int // instances referencing a security group / deployment set / hpc cluster

	settings Settings
	console  consoleLogs // not saved: a node agent writes them again every round
}

// Settings are the Server's configuration ECS answers by.
type Settings struct {
	ConsistencyDelay time.Duration // a new instance stays invisible to Describe this long
	GPUQuota         int           // total GPUs of live instances; 0 = DefaultGPUQuota
}

// DefaultGPUQuota is generous so only tests that lower it ever hit it.
const DefaultGPUQuota = 100000

// Configure sets the Server's configuration on a state's ECS records. The Server calls it on
// every state it builds.
func (d *Store) Configure(s Settings) { d.settings = s }

func (d *Store) gpuQuota() int { return d.EffectiveQuotas().GPUs }

// Init makes the maps a state file without some ECS keys left nil and rebuilds the indexes.
func (d *Store) Init() {
	if d.Instances == nil {
		d.Instances = map[string]*instance{}
	}
	if d.SGs == nil {
		d.SGs = map[string]*securityGroup{}
	}
	if d.DSets == nil {
		d.DSets = map[string]*deploymentSet{}
	}
	if d.Hpcs == nil {
		d.Hpcs = map[string]*hpcCluster{}
	}
	if d.Capacity == nil {
		d.Capacity = map[string]map[string]int{}
	}
	if d.ENITags == nil {
		d.ENITags = map[string]*eniTags{}
	}
	if d.Templates == nil {
		d.Templates = map[string]*launchTemplate{}
	}
	if d.Images == nil {
		d.Images = map[string]*imageRecord{}
	}
	d.reindex()
}

// StoreIn answers the ECS store of a Server's stores.
func StoreIn(s *core.Stores) *Store { return core.StoreOf[*Store](s, storeName) }

// reindex rebuilds every derived index; used after loading state.
func (d *Store) reindex() {
	d.order = d.order[:0]
	d.byTag = map[string]map[*instance]bool{}
	d.byVSwitch = map[string]map[*instance]bool{}
	d.refs = map[string]int{}
	for _, in := range d.Instances {
		d.order = append(d.order, in)
	}
	sort.Slice(d.order, func(i, j int) bool { return d.order[i].Seq < d.order[j].Seq })
	for _, in := range d.order {
		d.indexInstance(in)
	}
}

func tagKeyIndex(k, v string) string { return k + "\x00" + v }

func (d *Store) indexTags(in *instance, add bool) {
	for _, t := range in.Tags {
		for _, key := range []string{tagKeyIndex(t.K, t.V), tagKeyIndex(t.K, "*")} {
			set := d.byTag[key]
			if add {
				if set == nil {
					set = map[*instance]bool{}
					d.byTag[key] = set
				}
				set[in] = true
			} else if set != nil {
				delete(set, in)
				if len(set) == 0 {
					delete(d.byTag, key)
				}
			}
		}
	}
}

func (d *Store) indexInstance(in *instance) {
	d.indexTags(in, true)
	set := d.byVSwitch[in.VSwitchID]
	if set == nil {
		set = map[*instance]bool{}
		d.byVSwitch[in.VSwitchID] = set
	}
	set[in] = true
	for _, sg := range in.SGs {
		d.refs[sg]++
	}
	if in.DeploySet != "" {
		d.refs[in.DeploySet]++
	}
	if in.Hpc != "" {
		d.refs[in.Hpc]++
	}
}

func (d *Store) addInstance(in *instance) {
	d.Instances[in.ID] = in
	d.order = append(d.order, in) // Seq only grows, so order stays sorted
	d.indexInstance(in)
}

func (d *Store) removeInstance(in *instance) {
	delete(d.Instances, in.ID)
	i := sort.Search(len(d.order), func(i int) bool { return d.order[i].Seq >= in.Seq })
	if i < len(d.order) && d.order[i] == in {
		copy(d.order[i:], d.order[i+1:])
		d.order[len(d.order)-1] = nil
		d.order = d.order[:len(d.order)-1]
	}
	d.indexTags(in, false)
	if set := d.byVSwitch[in.VSwitchID]; set != nil {
		delete(set, in)
		if len(set) == 0 {
			delete(d.byVSwitch, in.VSwitchID)
		}
	}
	for _, sg := range in.SGs {
		d.decRef(sg)
	}
	d.decRef(in.DeploySet)
	d.decRef(in.Hpc)
	// Stock that was set explicitly comes back when an instance goes.
	if z := d.Capacity[in.Zone]; z != nil {
		if _, ok := z[in.Type]; ok {
			z[in.Type]++
		}
	}
}

func (d *Store) decRef(id string) {
	if id == "" {
		return
	}
	if d.refs[id] <= 1 {
		delete(d.refs, id)
	} else {
		d.refs[id]--
	}
}
