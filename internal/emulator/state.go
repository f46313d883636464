package emulator

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuslb "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/slb"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

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
)

type instance struct {
	ID          string   `json:"id"`
	Seq         uint64   `json:"seq"`
	Region      string   `json:"region"`
	Zone        string   `json:"zone"`
	Type        string   `json:"type"`
	Image       string   `json:"image"`
	Name        string   `json:"name,omitempty"`
	HostName    string   `json:"host,omitempty"`
	Desc        string   `json:"desc,omitempty"`
	Phase       string   `json:"phase"`
	PhaseAt     int64    `json:"phase_at"` // unix nanoseconds
	Created     int64    `json:"created"`  // unix nanoseconds
	VSwitchID   string   `json:"vsw"`
	VpcID       string   `json:"vpc"`
	IP          string   `json:"ip"`
	PublicIP    string   `json:"public_ip,omitempty"` // with InternetMaxBandwidthOut > 0
	SGs         []string `json:"sgs"`
	Tags        []tag    `json:"tags,omitempty"`
	Spot        string   `json:"spot,omitempty"`
	AutoRelease int64    `json:"auto_release,omitempty"` // unix seconds
	DeploySet   string   `json:"ds,omitempty"`
	Hpc         string   `json:"hpc,omitempty"`
	SysDisk     disk     `json:"sys"`
	DataDisks   []disk   `json:"data,omitempty"`
	NICs        []nic    `json:"nics,omitempty"`
	UserData    string   `json:"user_data,omitempty"`
	ChargeType  string   `json:"charge,omitempty"`
	KeyPair     string   `json:"key,omitempty"`
	RamRole     string   `json:"ram_role,omitempty"` // instance RAM role (RunInstances RamRoleName)
	StoppedMode string   `json:"stopped_mode,omitempty"`
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
	ID      string `json:"id"`
	Region  string `json:"region"`
	VpcID   string `json:"vpc"`
	Name    string `json:"name,omitempty"`
	Desc    string `json:"desc,omitempty"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	Rules   []rule `json:"rules,omitempty"`
	Tags    []tag  `json:"tags,omitempty"`
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
	Instance string `json:"instance"`
	Tags     []tag  `json:"tags"`
}

type hpcCluster struct {
	ID     string `json:"id"`
	Region string `json:"region"`
	Name   string `json:"name"`
	Desc   string `json:"desc,omitempty"`
}

// idemEntry remembers a create call made with a ClientToken: the hash of its
// parameters and the body answered, so a retry gets the same answer.
type idemEntry struct {
	Hash string `json:"hash"`
	Body []byte `json:"body"`
	At   int64  `json:"at"`
}

// db is all emulator state. Guarded by Server.mu.
type db struct {
	Seq       uint64                     `json:"seq"`
	Instances map[string]*instance       `json:"instances"`
	SGs       map[string]*securityGroup  `json:"security_groups"`
	DSets     map[string]*deploymentSet  `json:"deployment_sets"`
	Hpcs      map[string]*hpcCluster     `json:"hpc_clusters"`
	Capacity  map[string]map[string]int  `json:"capacity"`
	Idem      map[string]*idemEntry      `json:"idempotency"`
	ENITags   map[string]*eniTags        `json:"eni_tags,omitempty"` // tags of network interfaces, by ENI id
	Templates map[string]*launchTemplate `json:"launch_templates,omitempty"`
	// Unavailable marks instance types a zone does not sell: zone -> type ("*" for every
	// type) -> the stock-out code RunInstances answers (see SetUnavailable).
	Unavailable map[string]map[string]string `json:"unavailable,omitempty"`
	// NoSpot lists the instance types sold pay-as-you-go only (see SetNoSpot).
	NoSpot    []string                      `json:"no_spot,omitempty"`
	order     []*instance                   // live instances ordered by Seq
	byTag     map[string]map[*instance]bool // "key\x00value" and "key\x00*" -> instances
	byVSwitch map[string]map[*instance]bool
	refs      map[string]int // instances referencing a security group / deployment set / hpc cluster

	// stores are the records of the products moved into their own package (core.Stores); their
	// keys sit in the same JSON object as the fields above (see MarshalJSON).
	stores *core.Stores
}

// network is the VPC product's records (package vpc).
func (d *db) network() *emuvpc.Store { return emuvpc.StoreIn(d.stores) }

// loadBalancers is the SLB product's records (package slb).
func (d *db) loadBalancers() *emuslb.Store { return emuslb.StoreIn(d.stores) }

// dbFields is db without its JSON methods, so they can encode the fields the plain way.
type dbFields db

// MarshalJSON writes the fields above and every product store's keys as one flat object: the
// layout of the state file before the products had their own packages.
func (d *db) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal((*dbFields)(d))
	if err != nil {
		return nil, err
	}
	return d.stores.MarshalStores(raw)
}

// UnmarshalJSON reads the fields above and lets every product store read its own keys.
func (d *db) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, (*dbFields)(d)); err != nil {
		return err
	}
	if d.stores == nil {
		d.stores = core.NewStores()
	}
	return d.stores.UnmarshalStores(data)
}

func newDB() *db {
	d := &db{
		Instances: map[string]*instance{},
		SGs:       map[string]*securityGroup{},
		DSets:     map[string]*deploymentSet{},
		Hpcs:      map[string]*hpcCluster{},
		Capacity:  map[string]map[string]int{},
		Idem:      map[string]*idemEntry{},
		ENITags:   map[string]*eniTags{},
		Templates: map[string]*launchTemplate{},
		stores:    core.NewStores(),
	}
	d.reindex()
	return d
}

// reindex rebuilds every derived index; used after loading state.
func (d *db) reindex() {
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

func (d *db) indexTags(in *instance, add bool) {
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

func (d *db) indexInstance(in *instance) {
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

func (d *db) addInstance(in *instance) {
	d.Instances[in.ID] = in
	d.order = append(d.order, in) // Seq only grows, so order stays sorted
	d.indexInstance(in)
}

func (d *db) removeInstance(in *instance) {
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
	if len(d.ENITags) > 0 { // an instance's interfaces go with it, and their tags too
		delete(d.ENITags, primaryENI(in))
		for _, n := range in.NICs {
			delete(d.ENITags, n.ID)
		}
	}
	d.forgetInstanceInNet(in.ID)
	// Stock that was set explicitly comes back when an instance goes.
	if z := d.Capacity[in.Zone]; z != nil {
		if _, ok := z[in.Type]; ok {
			z[in.Type]++
		}
	}
	if isSpot(in.Spot) {
		if z := core.SpotStock(d.stores)[in.Zone]; z != nil {
			if _, ok := z[in.Type]; ok {
				z[in.Type]++
			}
		}
	}
}

func (d *db) decRef(id string) {
	if id == "" {
		return
	}
	if d.refs[id] <= 1 {
		delete(d.refs, id)
	} else {
		d.refs[id]--
	}
}

// newID makes a vendor-looking id ("i-" + 20 lowercase base-36 chars) that
// sorts by creation order.
func (d *db) newID(prefix string) string {
	d.Seq++
	return fmt.Sprintf("%s-%s", prefix, base36(d.Seq, 20))
}

func base36(n uint64, width int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, width)
	for i := width - 1; i >= 0; i-- {
		b[i] = digits[n%36]
		n /= 36
	}
	// A fixed leading letter pair keeps ids looking like the vendor's.
	b[0], b[1] = 'e', 'm'
	return string(b)
}

// --- persistence ---

// snapshot is the state file's shape: the RPC state and the OSS handler's
// own opaque state side by side.
type snapshot struct {
	DB  *db             `json:"db"`
	OSS json.RawMessage `json:"oss,omitempty"`
}

// saveLocked writes the state atomically (core.WriteFileAtomic). Caller holds s.mu (read is
// enough).
func (s *Server) saveLocked() error {
	if s.cfg.StateFile == "" {
		return nil
	}
	snap := snapshot{DB: s.db}
	if s.oss != nil {
		raw, err := s.oss.MarshalState()
		if err != nil {
			return fmt.Errorf("oss state: %w", err)
		}
		snap.OSS = raw
	}
	data, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	return core.WriteFileAtomic(s.cfg.StateFile, data)
}

func (s *Server) load() error {
	if s.cfg.StateFile == "" {
		return nil
	}
	data, err := os.ReadFile(s.cfg.StateFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d := newDB()
	snap := snapshot{DB: d}
	if err := json.Unmarshal(data, &snap); err != nil {
		return fmt.Errorf("state file %s: %w", s.cfg.StateFile, err)
	}
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
	if d.Idem == nil {
		d.Idem = map[string]*idemEntry{}
	}
	if d.ENITags == nil {
		d.ENITags = map[string]*eniTags{}
	}
	if d.Templates == nil {
		d.Templates = map[string]*launchTemplate{}
	}
	d.reindex()
	s.useDB(d)
	if s.oss != nil && len(snap.OSS) > 0 {
		if err := s.oss.UnmarshalState(snap.OSS); err != nil {
			return fmt.Errorf("oss state: %w", err)
		}
	}
	return nil
}

// markDirty asks the background saver to write soon. Writes are coalesced
// (at most one per saveInterval) because a 100k-instance state is megabytes.
func (s *Server) markDirty() {
	if s.cfg.StateFile == "" {
		return
	}
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

const saveInterval = 100 * time.Millisecond

func (s *Server) saver() {
	defer close(s.saverDone)
	for {
		select {
		case <-s.stop:
			return
		case <-s.dirty:
		}
		select {
		case <-s.stop:
			return
		case <-time.After(saveInterval):
		}
		s.mu.RLock()
		err := s.saveLocked()
		s.mu.RUnlock()
		if err != nil {
			s.logf("emulator: saving state: %v", err)
		}
	}
}
