package emulator

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
	emuess "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ess"
	emunas "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nas"
	emuquotas "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/quotas"
)

// Stats is the JSON of GET /_emulator/stats.
type Stats struct {
	Calls  map[string]int64 `json:"calls"`
	Total  int64            `json:"total"`
	Errors map[string]int64 `json:"errors"`
	// ServeSeconds is the time spent answering RPC calls, summed over calls (concurrent calls
	// count each): what benchmarks set beside the provider's time to show whether the emulator
	// is the bottleneck.
	ServeSeconds float64 `json:"serve_seconds"`
}

type statsCounter struct {
	mu     sync.Mutex
	calls  map[string]int64
	errors map[string]int64
	total  int64
	serve  time.Duration
}

func (c *statsCounter) record(action, code string) {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int64{}
		c.errors = map[string]int64{}
	}
	c.calls[action]++
	c.total++
	if code != "" {
		c.errors[code]++
	}
	c.mu.Unlock()
}

// served adds one answered RPC call's time.
func (c *statsCounter) served(d time.Duration) {
	c.mu.Lock()
	c.serve += d
	c.mu.Unlock()
}

func (c *statsCounter) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Stats{Calls: map[string]int64{}, Errors: map[string]int64{}, Total: c.total, ServeSeconds: c.serve.Seconds()}
	for k, v := range c.calls {
		st.Calls[k] = v
	}
	for k, v := range c.errors {
		st.Errors[k] = v
	}
	return st
}

func (c *statsCounter) reset() {
	c.mu.Lock()
	c.calls, c.errors, c.total, c.serve = map[string]int64{}, map[string]int64{}, 0, 0
	c.mu.Unlock()
}

// Stats returns the call counters per Action and per error code.
func (s *Server) Stats() Stats { return s.stats.snapshot() }

// Resources is the JSON of GET /_emulator/resources: every live resource.
// Lists are never nil so they marshal as [].
type Resources struct {
	Instances      []map[string]any `json:"instances"`
	Vpcs           []map[string]any `json:"vpcs"`
	VSwitches      []map[string]any `json:"vswitches"`
	SecurityGroups []map[string]any `json:"security_groups"`
	DeploymentSets []map[string]any `json:"deployment_sets"`
	HpcClusters    []map[string]any `json:"hpc_clusters"`
	FileSystems    []map[string]any `json:"file_systems"`
	Buckets        []map[string]any `json:"buckets"`
	NatGateways    []map[string]any `json:"nat_gateways"`
	SnatEntries    []map[string]any `json:"snat_entries"`
	EIPs           []map[string]any `json:"eips"`
	LoadBalancers  []map[string]any `json:"load_balancers"`
	ScalingGroups  []map[string]any `json:"scaling_groups"`
}

// Resources lists every live resource, sorted by id.
func (s *Server) Resources() Resources {
	s.mu.RLock()
	now := s.now()
	r := Resources{
		Instances: []map[string]any{}, Vpcs: []map[string]any{}, VSwitches: []map[string]any{},
		SecurityGroups: []map[string]any{}, DeploymentSets: []map[string]any{}, HpcClusters: []map[string]any{},
		FileSystems: []map[string]any{}, Buckets: []map[string]any{},
		NatGateways: []map[string]any{}, SnatEntries: []map[string]any{}, EIPs: []map[string]any{}, LoadBalancers: []map[string]any{},
		ScalingGroups: []map[string]any{},
	}
	ecs := emuecs.ListResources(s.adminCall(now))
	r.Instances = append(r.Instances, ecs.Instances...)
	r.SecurityGroups = append(r.SecurityGroups, ecs.SecurityGroups...)
	r.DeploymentSets = append(r.DeploymentSets, ecs.DeploymentSets...)
	r.HpcClusters = append(r.HpcClusters, ecs.HpcClusters...)
	for _, v := range s.db.network().Vpcs {
		r.Vpcs = append(r.Vpcs, map[string]any{"id": v.ID, "region": v.Region, "name": v.Name, "cidr_block": v.CIDR,
			"status": s.asyncStatus(v.Created, now, "Pending", "Available"), "tags": tagMap(v.Tags)})
	}
	for _, v := range s.db.network().VSwitches {
		r.VSwitches = append(r.VSwitches, map[string]any{"id": v.ID, "region": v.Region, "vpc_id": v.VpcID, "zone": v.Zone,
			"cidr_block": v.CIDR, "name": v.Name, "status": s.asyncStatus(v.Created, now, "Pending", "Available"), "tags": tagMap(v.Tags)})
	}
	for _, f := range emunas.StoreIn(s.db.stores).FileSystems {
		r.FileSystems = append(r.FileSystems, map[string]any{"id": f.ID, "region": f.Region, "zone": f.Zone,
			"file_system_type": f.Type, "storage_type": f.StorageType, "protocol_type": f.Protocol,
			"capacity": f.Capacity, "status": f.Status(serverEnv{s}, now), "mount_targets": len(f.Mounts)})
	}
	s.netResources(now, &r)
	r.ScalingGroups = append(r.ScalingGroups, emuess.Resources(s.adminCall(now))...)
	s.mu.RUnlock()
	if s.oss != nil {
		if b := s.oss.Buckets(); b != nil {
			r.Buckets = b
		}
	}
	for _, l := range [][]map[string]any{r.Vpcs, r.VSwitches, r.SecurityGroups, r.DeploymentSets, r.HpcClusters, r.FileSystems, r.ScalingGroups} {
		sort.Slice(l, func(i, j int) bool { return l[i]["id"].(string) < l[j]["id"].(string) })
	}
	return r
}

// SetSpotCapacity replaces the spot stock table: zone -> instance type -> spot instances
// available. Spot launches (SpotStrategy other than NoSpot) of a listed type draw on it; types
// not listed have plenty. An empty map restores plenty everywhere.
func (s *Server) SetSpotCapacity(c map[string]map[string]int) {
	cp := emuecs.StockTable(c)
	s.mu.Lock()
	emuess.StoreIn(s.db.stores).SpotCapacity = cp
	s.mu.Unlock()
	s.markDirty()
}

// SetQuotaCenter replaces the Quota Center quotas set, by quota code (quotas.Codes); an empty
// table restores the vendor's defaults.
func (s *Server) SetQuotaCenter(t map[string]int) error {
	s.mu.Lock()
	err := emuquotas.StoreIn(s.db.stores).SetQuotas(t)
	s.mu.Unlock()
	if err == nil {
		s.markDirty()
	}
	return err
}

// SetESSLimits replaces the Auto Scaling limits DescribeLimitation answers and CreateScalingGroup
// holds MaxSize to; the zero Limits restores the defaults.
func (s *Server) SetESSLimits(l emuess.Limits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	emuess.StoreIn(s.db.stores).SetLimits(l)
	s.mu.Unlock()
	s.markDirty()
	return nil
}

// ReclaimSpot releases spot instances the way the vendor does when it takes spot capacity back;
// scaling groups with SpotInstanceRemedy launch replacements (see ess.ReclaimSpot). Nothing
// changes when an id is not a live spot instance.
func (s *Server) ReclaimSpot(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.adminCall(s.now())
	c.ReqID, c.Action = newRequestID(), "ReclaimSpot"
	if err := emuess.ReclaimSpot(c, ids); err != nil {
		return err
	}
	s.markDirty()
	return nil
}

// PowerOffFromGuest is what an instance's operating system does when it powers itself off (an
// image builder after baking): ECS shows it Stopping, then Stopped. For a model of the guest,
// such as the node agent.
func (s *Server) PowerOffFromGuest(instanceID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.adminCall(s.now())
	c.ReqID, c.Action = newRequestID(), "PowerOffFromGuest"
	if emuecs.PowerOffFromGuest(c, instanceID) {
		s.markDirty()
	}
}

// DelayGuestShutdown is a model of the guest (the node agent) saying its operating system delays
// a normal shutdown by up to d: a StopInstances without ForceStop leaves the instance Stopping
// until the guest calls PowerOffFromGuest or d passes.
func (s *Server) DelayGuestShutdown(instanceID string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if emuecs.DelayGuestShutdown(s.adminCall(s.now()), instanceID, d) {
		s.markDirty()
	}
}

// adminCall is the call an admin endpoint hands a product package: the state, the Env and the
// time, and no request. Caller holds s.mu.
func (s *Server) adminCall(now time.Time) *core.Call {
	return &core.Call{Now: now, Stores: s.db.stores, Env: serverEnv{s}}
}

// Reset empties all state and counters (faults and stock included).
func (s *Server) Reset() {
	s.mu.Lock()
	s.useDB(newDB())
	s.mu.Unlock()
	if s.oss != nil {
		s.oss.Reset()
	}
	s.stats.reset()
	s.auth.ResetNonces()
	s.metadata.reset()
	s.SetFaults(Faults{})
	s.markDirty()
}

// SetCapacity replaces the stock table: zone -> instance type -> instances
// available. Types not listed in a zone have plenty; an empty map restores
// plenty everywhere.
func (s *Server) SetCapacity(c map[string]map[string]int) {
	cp := emuecs.StockTable(c)
	s.mu.Lock()
	s.db.compute().SetCapacity(cp)
	s.mu.Unlock()
	s.markDirty()
}

// SetUnavailable replaces the table of types zones do not sell at all: zone -> instance type
// ("*" for every type) -> the code RunInstances answers there (one of ecs.StockOutCodes, HTTP
// 403), whatever the capacity table says. DescribeAvailableResource shows those types SoldOut. An
// empty map sells everything again.
func (s *Server) SetUnavailable(m map[string]map[string]string) error {
	cp, err := emuecs.UnavailableTable(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.db.compute().SetUnavailable(cp)
	s.mu.Unlock()
	s.markDirty()
	return nil
}

// SetNoSpot replaces the list of instance types with no spot offer in any zone: spot launches of
// them fail with ecs.NoSpotCode and DescribeAvailableResource asked with a SpotStrategy leaves
// them out. An empty list (the default) sells spot of every type.
func (s *Server) SetNoSpot(typesList []string) error {
	cp, err := emuecs.NoSpotList(typesList)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.db.compute().SetNoSpot(cp)
	s.mu.Unlock()
	s.markDirty()
	return nil
}

// SetQuotas replaces the account's quotas (ecs.Quotas: the vCPU quotas RunInstances enforces
// and DescribeAccountAttributes answers, the GPU quota, and the other attributes it answers). A
// zero field keeps its default; the zero Quotas restores every default.
func (s *Server) SetQuotas(q emuecs.Quotas) error {
	if err := q.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	s.db.compute().SetQuotas(q)
	s.mu.Unlock()
	s.markDirty()
	return nil
}

// Quotas are the quotas the emulator enforces now, defaults filled in.
func (s *Server) Quotas() emuecs.Quotas {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.compute().EffectiveQuotas()
}

// SetConsoleOutput replaces what instanceID's serial console shows ("" empties it); ECS
// GetInstanceConsoleOutput answers it, Base64-encoded as the vendor does. A node agent beside the
// emulator writes it (the consoles are not saved with the state).
func (s *Server) SetConsoleOutput(instanceID, output string) {
	s.mu.RLock()
	st := s.db.compute()
	s.mu.RUnlock()
	st.SetConsoleOutput(instanceID, output, s.now())
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	writeJSON := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	bad := func(msg string, code int) { http.Error(w, msg, code) }
	switch r.URL.Path {
	case "/_emulator/stats":
		writeJSON(s.Stats())
	case "/_emulator/resources":
		writeJSON(s.Resources())
	case "/_emulator/reset":
		if r.Method != http.MethodPost {
			bad("use POST", http.StatusMethodNotAllowed)
			return
		}
		s.Reset()
		writeJSON(map[string]any{"ok": true})
	case "/_emulator/faults":
		switch r.Method {
		case http.MethodGet:
			writeJSON(s.currentFaults())
		case http.MethodPut, http.MethodPost:
			var f Faults
			if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
				bad("bad JSON: "+err.Error(), http.StatusBadRequest)
				return
			}
			for _, x := range []float64{f.ThrottleRate, f.UnavailableRate, f.ResetRate} {
				if x < 0 || x > 1 {
					bad("rates are fractions in [0,1]", http.StatusBadRequest)
					return
				}
			}
			s.SetFaults(f)
			writeJSON(f)
		default:
			bad("use GET or PUT", http.StatusMethodNotAllowed)
		}
	case "/_emulator/capacity":
		serveTable(s, w, r, func() any { return s.db.compute().Capacity },
			func(c map[string]map[string]int) error { s.SetCapacity(c); return nil })
	case "/_emulator/spot_capacity":
		serveTable(s, w, r, func() any { return emuess.StoreIn(s.db.stores).SpotCapacity },
			func(c map[string]map[string]int) error { s.SetSpotCapacity(c); return nil })
	case "/_emulator/spot_reclaim":
		if r.Method != http.MethodPost {
			bad("use POST", http.StatusMethodNotAllowed)
			return
		}
		var body struct {
			InstanceIDs []string `json:"instance_ids"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			bad("bad JSON: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.ReclaimSpot(body.InstanceIDs); err != nil {
			bad(err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(map[string]any{"reclaimed": body.InstanceIDs})
	case GPUFaultsPath:
		s.serveGPUFaults(w, r)
	case "/_emulator/quotas":
		// GET shows the quotas in force, defaults filled in; PUT replaces the ones set.
		serveTable(s, w, r, func() any { return s.db.compute().EffectiveQuotas() }, s.SetQuotas)
	case "/_emulator/quota_center":
		// GET shows the Quota Center quotas in force by code, defaults filled in; PUT replaces the ones set.
		serveTable(s, w, r, func() any { return emuquotas.StoreIn(s.db.stores).Effective() }, s.SetQuotaCenter)
	case "/_emulator/ess_limits":
		// GET shows the Auto Scaling limits in force, defaults filled in; PUT replaces the ones set.
		serveTable(s, w, r, func() any { return emuess.StoreIn(s.db.stores).EffectiveLimits() }, s.SetESSLimits)
	case "/_emulator/unavailable":
		serveTable(s, w, r, func() any { return s.db.compute().Unavailable }, s.SetUnavailable)
	case "/_emulator/no_spot":
		serveTable(s, w, r, func() any { return s.db.compute().NoSpot }, s.SetNoSpot)
	case ClockPath:
		s.serveClock(w, r)
	case "/_emulator/health":
		writeJSON(map[string]any{"ok": true, "time": s.now().UTC().Format(time.RFC3339)})
	default:
		if strings.HasPrefix(r.URL.Path, MetadataPath+"/") {
			s.serveMetadata(w, r)
			return
		}
		if !s.servePlugin(w, r) {
			bad("unknown admin path", http.StatusNotFound)
		}
	}
}

// serveTable answers an admin table: GET shows it, PUT (or POST) replaces it with the JSON body.
// The table is encoded under the read lock: RunInstances draws stock from it in place.
func serveTable[T any](s *Server, w http.ResponseWriter, r *http.Request, get func() any, put func(T) error) {
	switch r.Method {
	case http.MethodGet:
		s.mu.RLock()
		b, _ := json.Marshal(get())
		s.mu.RUnlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	case http.MethodPut, http.MethodPost:
		var v T
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := put(v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	default:
		http.Error(w, "use GET or PUT", http.StatusMethodNotAllowed)
	}
}
