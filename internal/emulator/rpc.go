package emulator

import (
	"encoding/json"
	"net/http"

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

	vpcRec     = emuvpc.VPC
	vswitchRec = emuvpc.VSwitch
)

// Limits the vendor documents for every product's tag API.
const (
	maxTagsPerCall  = core.MaxTagsPerCall
	tagListPageSize = core.TagListPageSize
)

var (
	errf          = core.Errf
	errMissing    = core.ErrMissing
	errInvalid    = core.ErrInvalid
	errNotFound   = core.ErrNotFound
	errDependency = core.ErrDependency
	errStatus     = core.ErrStatus
	setTags       = core.SetTags
	removeTags    = core.RemoveTags
	matchTags     = core.MatchTags
	tagMap        = core.TagMap
	sortTargets   = core.SortTargets
	taggedTargets = core.TaggedTargets[*call]
)

// errorBody is the vendor's JSON error document.
type errorBody struct {
	RequestId string `json:"RequestId"`
	HostId    string `json:"HostId"`
	Code      string `json:"Code"`
	Message   string `json:"Message"`
	Recommend string `json:"Recommend"`
}

func writeAPIError(w http.ResponseWriter, e *apiError, requestID, host string) {
	body, _ := json.Marshal(errorBody{
		RequestId: requestID,
		HostId:    host,
		Code:      e.Code,
		Message:   e.Message,
		Recommend: "https://api.aliyun.com/troubleshoot?q=" + e.Code,
	})
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}
