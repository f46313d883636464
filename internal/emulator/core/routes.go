package core

import (
	"sort"
	"time"
)

// Call is one RPC request being answered by a product's handler: its parameters, where and when
// it runs, and the state it may read and (for a write route) change. The dispatcher holds the
// state lock for the handler's whole run: the read lock for reads, the write lock for writes.
type Call struct {
	P       Params
	Action  string
	Version string
	Region  string // "" for NoRegion actions
	Now     time.Time
	ReqID   string
	AK      string // the access key that signed the call
	// Host is the address the client sent the request to (its Host header): the emulator as
	// that client reaches it, which Location DescribeEndpoints answers as every product's endpoint.
	Host   string
	Stores *Stores
	Env    Env
}

// Handler answers a Call with a response struct (one of the SDK's, so field names are the
// vendor's) or an Error.
type Handler func(c *Call) (any, *Error)

// Route describes one Action: write routes take the exclusive lock, and Idem routes honour
// ClientToken.
type Route struct {
	Fn       Handler
	Write    bool
	Idem     bool
	NoRegion bool // region-less actions (DescribeRegions, AssumeRole)
	// RegionOptional actions do not require RegionId in the vendor's models (the endpoint names
	// the region); without one the emulator answers for its first region.
	RegionOptional bool
	// VendorModel answers are built from the vendor's current response model already and skip
	// pruning to it.
	VendorModel bool
}

// routes maps "Version/Action" to its route; filled by each product package's init.
var routes = map[string]Route{}

// Register serves action of the API version with r. A product calls it from its init.
func Register(version, action string, r Route) {
	key := version + "/" + action
	if _, dup := routes[key]; dup {
		panic("emulator: " + key + " registered twice")
	}
	routes[key] = r
}

// Lookup answers the route of "Version/Action".
func Lookup(key string) (Route, bool) {
	r, ok := routes[key]
	return r, ok
}

// Served lists the registered "Version/Action" keys, sorted.
func Served() []string {
	out := make([]string, 0, len(routes))
	for k := range routes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TimeFormat is the vendor's UTC timestamp format in answers (CreationTime, Expiration).
const TimeFormat = "2006-01-02T15:04:05Z"

// FormatTime writes unix nanoseconds in TimeFormat.
func FormatTime(unixNano int64) string { return time.Unix(0, unixNano).UTC().Format(TimeFormat) }
