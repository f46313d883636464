package emulator

import (
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// The products not yet moved into their own package name the core's types and helpers by
// their old names; each alias goes when the last file using it moves.
type (
	apiError = core.Error
	params   = core.Params
	tag      = core.Tag

	tagTarget = core.TagTarget
	tagKind   = core.TagKind[*call]
	tagAPI    = core.TagAPI[*call]
)

// Limits the vendor documents for every product's tag API.
const (
	maxTagsPerCall  = core.MaxTagsPerCall
	tagListPageSize = core.TagListPageSize

	defaultResourceGroup = core.DefaultResourceGroup
)

var (
	errf          = core.Errf
	errMissing    = core.ErrMissing
	errInvalid    = core.ErrInvalid
	errNotFound   = core.ErrNotFound
	errDependency = core.ErrDependency
	errStatus     = core.ErrStatus
	matchTags     = core.MatchTags
	tagMap        = core.TagMap
	sortTargets   = core.SortTargets
	writeAPIError = core.WriteError
	newRequestID  = core.NewRequestID
	allocIP       = (*emuvpc.VSwitch).NextAddress
	eipAddress    = emuvpc.PublicAddress
)

func sortedKeys[V any](m map[string]V) []string { return core.SortedKeys(m) }

type errorBody = core.ErrorBody
