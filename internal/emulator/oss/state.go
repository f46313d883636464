package oss

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Buckets lists every live bucket for /_emulator/resources, sorted by name.
func (h *Handler) Buckets() []map[string]any {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]map[string]any, 0, len(h.buckets))
	for _, b := range h.buckets {
		enc := ""
		if b.Encryption != nil {
			enc = deref(b.Encryption.SSEAlgorithm)
		}
		out = append(out, map[string]any{
			"name":                 b.Name,
			"region":               b.Region,
			"location":             location(b.Region),
			"acl":                  b.ACL,
			"storage_class":        b.StorageClass,
			"data_redundancy_type": b.Redundancy,
			"versioning":           b.Versioning,
			"encryption":           enc,
			"block_public_access":  b.BlockPublicAccess,
			"lifecycle_rules":      len(b.Lifecycle),
			"object_count":         len(b.Objects),
			"version_count":        b.versionCount(),
			"tags":                 b.tagMap(),
			"created":              b.Created.UTC().Format(time.RFC3339),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
	return out
}

// Reset drops every bucket and object.
func (h *Handler) Reset() {
	h.mu.Lock()
	h.buckets = map[string]*bucket{}
	h.mu.Unlock()
}

// stateVersion guards against loading a file written by an incompatible
// emulator.
const stateVersion = 1

type stateFile struct {
	Version int       `json:"version"`
	Buckets []*bucket `json:"buckets"`
}

// MarshalState serialises all buckets and objects (object data is base64 in
// the JSON) for the emulator's --state-file.
func (h *Handler) MarshalState() ([]byte, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	st := stateFile{Version: stateVersion, Buckets: make([]*bucket, 0, len(h.buckets))}
	for _, b := range h.buckets {
		st.Buckets = append(st.Buckets, b)
	}
	sort.Slice(st.Buckets, func(i, j int) bool { return st.Buckets[i].Name < st.Buckets[j].Name })
	return json.Marshal(st)
}

// UnmarshalState replaces the current state with data from MarshalState.
// Empty input means empty state. On error the current state is unchanged.
func (h *Handler) UnmarshalState(data []byte) error {
	buckets := map[string]*bucket{}
	if len(data) > 0 {
		var st stateFile
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("oss emulator state: %w", err)
		}
		if st.Version != stateVersion {
			return fmt.Errorf("oss emulator state: version %d, want %d", st.Version, stateVersion)
		}
		for _, b := range st.Buckets {
			if b == nil || !validBucketName(b.Name) {
				return fmt.Errorf("oss emulator state: invalid bucket entry")
			}
			if b.Objects == nil {
				b.Objects = map[string]*object{}
			}
			buckets[b.Name] = b
		}
	}
	h.mu.Lock()
	h.buckets = buckets
	h.mu.Unlock()
	return nil
}
