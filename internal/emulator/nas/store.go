package nas

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// storeName names the NAS records among the emulator's stores.
const storeName = "nas"

func init() { core.RegisterStore(storeName, func() core.Store { return &Store{} }) }

// MountTarget is one mount target of a file system, in a vSwitch of its VPC. Its status is
// derived from Created: Pending, then Active.
type MountTarget struct {
	Domain      string `json:"domain"`
	VpcID       string `json:"vpc"`
	VSwitchID   string `json:"vsw"`
	AccessGroup string `json:"access_group"`
	NetworkType string `json:"net"`
	Created     int64  `json:"created"`
}

// FileSystem is one NAS file system. Its status is derived from Phase and PhaseAt: Pending (or
// Extending after UpgradeFileSystem), then Running.
type FileSystem struct {
	ID          string        `json:"id"`
	Region      string        `json:"region"`
	Zone        string        `json:"zone"`
	Type        string        `json:"type"`
	StorageType string        `json:"storage_type"`
	Protocol    string        `json:"protocol"`
	Capacity    int64         `json:"capacity,omitempty"` // GiB
	Bandwidth   int64         `json:"bandwidth,omitempty"`
	Desc        string        `json:"desc,omitempty"`
	VpcID       string        `json:"vpc,omitempty"`
	VSwitchID   string        `json:"vsw,omitempty"`
	Encrypt     int           `json:"encrypt,omitempty"`
	Created     int64         `json:"created"`
	Phase       string        `json:"phase"` // "create" or "extend"
	PhaseAt     int64         `json:"phase_at"`
	Mounts      []MountTarget `json:"mounts,omitempty"`
	Tags        []core.Tag    `json:"tags,omitempty"`
}

// Store is the NAS records. Its JSON key "file_systems" is the one the state file had before
// NAS had its own package.
type Store struct {
	FileSystems map[string]*FileSystem `json:"file_systems"`
}

// Init makes the map a state file without NAS keys left nil.
func (s *Store) Init() {
	if s.FileSystems == nil {
		s.FileSystems = map[string]*FileSystem{}
	}
}

// StoreIn answers the NAS store of a Server's stores.
func StoreIn(s *core.Stores) *Store { return core.StoreOf[*Store](s, storeName) }

// Status is the file system's status as DescribeFileSystems answers it.
func (f *FileSystem) Status(env core.Env, now time.Time) string {
	if f.Phase == "extend" {
		return env.AsyncStatus(f.PhaseAt, now, "Extending", "Running")
	}
	return env.AsyncStatus(f.PhaseAt, now, "Pending", "Running")
}
