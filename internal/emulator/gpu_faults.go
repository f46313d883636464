package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// GPUFaultsPath injects hardware faults into instances' GPUs (issue #33): POST a GPUFault to set
// one (it replaces the fault of the same GPU), DELETE ?instance_id=ID[&gpu=N] to clear one GPU's
// (a GPU reset) or every one of the instance, GET to list them. The faults are saved with their
// instances and go with them; the node agent reads them from View (InstanceView.GPUFaults) and
// plays what the node's tools report of them. A fault POSTed with instance_id "next"
// (GPUFaultNext) waits for the next launched instance that has its GPU and is listed as pending
// until then.
const GPUFaultsPath = "/_emulator/gpu_faults"

// GPUFaultNext is the instance_id of a fault held for the next launched instance with its GPU.
const GPUFaultNext = emuecs.NextInstance

// GPUFault is one faulty GPU of an instance (see ecs.GPUFault for the fields and their units).
type GPUFault = emuecs.GPUFault

// SetGPUFault records a fault on one GPU of a live instance; an error for an instance that does
// not exist, a GPU index outside its type's count, or a fault that sets nothing.
func (s *Server) SetGPUFault(f GPUFault) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := emuecs.SetGPUFault(s.adminCall(s.now()), f); err != nil {
		return err
	}
	s.markDirty()
	return nil
}

// ClearGPUFaults clears the fault of one GPU of an instance, or all of them with gpu negative,
// and answers how many it cleared.
func (s *Server) ClearGPUFaults(instanceID string, gpu int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := emuecs.ClearGPUFaults(s.adminCall(s.now()), instanceID, gpu)
	if n > 0 {
		s.markDirty()
	}
	return n, err
}

// GPUFaults lists the faults of every live instance, in creation order, then by GPU.
func (s *Server) GPUFaults() []GPUFault {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return emuecs.GPUFaults(s.adminCall(s.now()))
}

// PendingGPUFaults lists the faults held for the next launched instance (GPUFaultNext), by GPU.
func (s *Server) PendingGPUFaults() []GPUFault {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return emuecs.PendingGPUFaults(s.adminCall(s.now()))
}

// serveGPUFaults answers GPUFaultsPath.
func (s *Server) serveGPUFaults(w http.ResponseWriter, r *http.Request) {
	answer := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch r.Method {
	case http.MethodGet:
		answer(map[string]any{"gpu_faults": s.GPUFaults(), "pending": s.PendingGPUFaults()})
	case http.MethodPost, http.MethodPut:
		var f GPUFault
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields() // a misspelt figure must not leave the GPU healthy unnoticed
		if err := dec.Decode(&f); err != nil {
			http.Error(w, "bad JSON: "+err.Error()+` (fields: instance_id, or "next" for the next instance launched, gpu, xid, nvlink_gbs in GB/s, erdma_gbps in Gbit/s)`, http.StatusBadRequest)
			return
		}
		if err := s.SetGPUFault(f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer(f)
	case http.MethodDelete:
		id, gpu, err := gpuFaultQuery(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n, err := s.ClearGPUFaults(id, gpu)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer(map[string]any{"cleared": n})
	default:
		http.Error(w, "use GET, POST or DELETE", http.StatusMethodNotAllowed)
	}
}

// gpuFaultQuery reads DELETE's instance_id (required) and gpu (optional: -1 for every GPU).
func gpuFaultQuery(r *http.Request) (string, int, error) {
	q := r.URL.Query()
	id := q.Get("instance_id")
	if id == "" {
		return "", 0, fmt.Errorf("DELETE %s?instance_id=ID[&gpu=N]: instance_id is required", GPUFaultsPath)
	}
	if q.Get("gpu") == "" {
		return id, -1, nil
	}
	gpu, err := strconv.Atoi(q.Get("gpu"))
	if err != nil || gpu < 0 {
		return "", 0, fmt.Errorf("gpu %q is not a GPU index", q.Get("gpu"))
	}
	return id, gpu, nil
}
