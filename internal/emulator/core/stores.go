package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Store is one product's records. It marshals to a JSON object whose keys become keys of the
// state file's "db" object, so they must not collide with another store's (every key is the
// product's own, such as "sts"). Init makes a store whose file lacked some of its keys ready
// for use (nil maps made).
type Store interface {
	Init()
}

// storeFactories are the stores products registered, by name.
var storeFactories = map[string]func() Store{}

// RegisterStore declares the store a product keeps its records in. A product calls it from its
// init; every Server gets its own store from newStore.
func RegisterStore(name string, newStore func() Store) {
	if _, dup := storeFactories[name]; dup {
		panic("emulator: store " + name + " registered twice")
	}
	storeFactories[name] = newStore
}

// Stores is one Server's set of product stores. It is guarded by the Server's state lock like
// the rest of the state.
type Stores struct {
	byName map[string]Store
}

// NewStores makes an empty store of every registered product.
func NewStores() *Stores {
	s := &Stores{byName: map[string]Store{}}
	for name, newStore := range storeFactories {
		st := newStore()
		st.Init()
		s.byName[name] = st
	}
	return s
}

// StoreOf answers the store registered as name. It panics when the store is not of type T or
// was never registered: both are wiring mistakes no request can cause.
func StoreOf[T Store](s *Stores, name string) T {
	st, ok := s.byName[name].(T)
	if !ok {
		panic(fmt.Sprintf("emulator: store %q is %T, not the type asked for", name, s.byName[name]))
	}
	return st
}

func (s *Stores) names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// MarshalStores splices every store's keys into obj, the JSON object of the rest of the state,
// so the state file stays one flat object whichever package owns a record.
func (s *Stores) MarshalStores(obj []byte) ([]byte, error) {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, fmt.Errorf("emulator: state is not a JSON object")
	}
	out := append([]byte(nil), obj[:len(obj)-1]...)
	empty := len(bytes.TrimSpace(obj[1:len(obj)-1])) == 0
	for _, name := range s.names() {
		raw, err := json.Marshal(s.byName[name])
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", name, err)
		}
		inner := bytes.TrimSpace(raw[1 : len(raw)-1])
		if len(inner) == 0 {
			continue
		}
		if !empty {
			out = append(out, ',')
		}
		out = append(out, inner...)
		empty = false
	}
	return append(out, '}'), nil
}

// UnmarshalStores reads every store's keys from obj, the state file's "db" object; keys a
// store does not know are other stores' and are skipped.
func (s *Stores) UnmarshalStores(obj []byte) error {
	for _, name := range s.names() {
		st := s.byName[name]
		if err := json.Unmarshal(obj, st); err != nil {
			return fmt.Errorf("store %s: %w", name, err)
		}
		st.Init()
	}
	return nil
}
