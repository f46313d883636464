package emulator

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
	emuslb "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/slb"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// idemEntry remembers a create call made with a ClientToken: the hash of its
// parameters and the body answered, so a retry gets the same answer.
type idemEntry struct {
	Hash string `json:"hash"`
	Body []byte `json:"body"`
	At   int64  `json:"at"`
}

// db is all emulator state. Guarded by Server.mu.
type db struct {
	Seq  uint64                `json:"seq"`
	Idem map[string]*idemEntry `json:"idempotency"`

	// stores are the records of every product (core.Stores); their keys sit in the same JSON
	// object as the fields above (see MarshalJSON).
	stores *core.Stores
}

// network is the VPC product's records (package vpc).
func (d *db) network() *emuvpc.Store { return emuvpc.StoreIn(d.stores) }

// loadBalancers is the SLB product's records (package slb).
func (d *db) loadBalancers() *emuslb.Store { return emuslb.StoreIn(d.stores) }

// compute is the ECS product's records (package ecs).
func (d *db) compute() *emuecs.Store { return emuecs.StoreIn(d.stores) }

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
	return &db{Idem: map[string]*idemEntry{}, stores: core.NewStores()}
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
	if d.Idem == nil {
		d.Idem = map[string]*idemEntry{}
	}
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
