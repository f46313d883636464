// Package conformance holds what the vendor's own API models say about each action the emulator
// serves: the parameters the vendor requires, the integer ranges it documents, and the response
// model an answer must fit. The tables are generated, one per product (models_<product>_gen.go,
// merged in models_gen.go), from the request and response models of Alibaba Cloud's
// alibabacloud-go SDK modules, whose field comments carry the vendor's API documentation; each
// table's header says which module version or repository commit it was read from. The emulator's
// conformance suite (internal/emulator/conformance_test.go) holds every served action to them.
package conformance

// To read the models of SDK modules the Go module proxy does not serve (NAS, STS, SLB) from
// checkouts, set CONFORMANCE_MODEL_DIRS=<repository>=<directory>@<commit>,... (see gen); without
// it their tables are kept as generated before.
//
//go:generate go run ./gen

// Action is one vendor action as its SDK request model documents it.
type Action struct {
	Version string // API version, e.g. 2014-05-26
	Name    string // e.g. RunInstances
	// Required are the wire names of the parameters documented "This parameter is required.";
	// a repeated parameter is named by its first entry (InstanceId.1).
	Required []string
	// Limits are the integer ranges documented for top-level parameters.
	Limits []Limit
	// Doc holds, per parameter, the documentation sentence a limit or requirement came from.
	Doc map[string]string
}

// Limit is a documented integer range; Min or Max is NoBound when the model states none.
type Limit struct {
	Param    string
	Min, Max int64
}

// NoBound marks a side of a Limit the documentation leaves open.
const NoBound = -1 << 62

// Key names an action as the emulator's dispatch table does: "Version/Action".
func (a Action) Key() string { return a.Version + "/" + a.Name }

// merge joins the product tables into one.
func merge[V any](tables ...map[string]V) map[string]V {
	out := map[string]V{}
	for _, t := range tables {
		for k, v := range t {
			out[k] = v
		}
	}
	return out
}
