package emulator

import "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"

// The core's types and helpers under the short names the dispatcher and the admin endpoints
// call them by.
type (
	apiError = core.Error
	params   = core.Params
)

var (
	errf          = core.Errf
	errMissing    = core.ErrMissing
	errInvalid    = core.ErrInvalid
	tagMap        = core.TagMap
	writeAPIError = core.WriteError
	newRequestID  = core.NewRequestID
)

func sortedKeys[V any](m map[string]V) []string { return core.SortedKeys(m) }

type errorBody = core.ErrorBody
