package cloud

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/responses"
)

// MaxTagResourceIDs is how many resources one TagResources or UntagResources call takes (the
// vendor's limit, the same on ECS, VPC and NAS; the provider tags load balancers one at a time).
const MaxTagResourceIDs = 50

// MaxTagsPerResource is how many tags one resource may carry (the vendor's limit).
const MaxTagsPerResource = 20

// ResourceKind names a kind of taggable object: the product whose tag API it uses and the
// ResourceType that API takes.
type ResourceKind struct {
	product      string
	resourceType string
	noun         string
}

// The kinds of object the provider tags after creating them.
var (
	KindInstance      = ResourceKind{ProductECS, "instance", "instances"}
	KindImage         = ResourceKind{ProductECS, "image", "image"}
	KindSecurityGroup = ResourceKind{ProductECS, "securitygroup", "security group"}
	KindVPC           = ResourceKind{ProductVPC, "VPC", "VPC"}
	KindVSwitch       = ResourceKind{ProductVPC, "VSWITCH", "vSwitches"}
	KindFileSystem    = ResourceKind{ProductNAS, "filesystem", "file system"}
	KindNATGateway    = ResourceKind{ProductVPC, "NATGATEWAY", "NAT gateway"}
	KindEIP           = ResourceKind{ProductVPC, "EIP", "EIP"}
	// KindLoadBalancer is a Classic Load Balancer instance; the SLB tag API calls it "instance".
	KindLoadBalancer = ResourceKind{ProductSLB, "instance", "load balancer"}
	// KindScalingGroup is an Auto Scaling group; ESS's tag API takes "scalinggroup" only.
	KindScalingGroup = ResourceKind{ProductESS, "scalinggroup", "scaling group"}
)

// DiffTags says how to move an object's tags from have to want: the tags to set (added or
// changed) and the keys to remove, sorted.
func DiffTags(have, want map[string]string) (set map[string]string, remove []string) {
	set = map[string]string{}
	for k, v := range want {
		if old, ok := have[k]; !ok || old != v {
			set[k] = v
		}
	}
	for k := range have {
		if _, ok := want[k]; !ok {
			remove = append(remove, k)
		}
	}
	sort.Strings(remove)
	return set, remove
}

// SyncTags moves the objects' tags from have to want: one UntagResources call for removed keys,
// then one TagResources call for added or changed ones (per MaxTagResourceIDs objects). No call
// when nothing changes.
func (c *Client) SyncTags(ctx context.Context, kind ResourceKind, ids []string, have, want map[string]string) error {
	if len(ids) == 0 {
		return nil
	}
	set, remove := DiffTags(have, want)
	if err := c.UntagResources(ctx, kind, ids, remove); err != nil {
		return err
	}
	return c.TagResources(ctx, kind, ids, set)
}

// tagAPI is where one product keeps its TagResources and UntagResources actions. The four products
// share the request's shape (ResourceType, ResourceId.N, Tag.N.Key/Value, TagKey.N) and differ
// only in these names, so one request type serves them all; the names are the SDK's own
// (services/<product>/tag_resources.go and untag_resources.go).
type tagAPI struct {
	product, version, tagAction, untagAction, locationCode string
}

var tagAPIs = map[string]tagAPI{
	ProductECS: {"Ecs", "2014-05-26", "TagResources", "UntagResources", "ecs"},
	// VPC spells its untag action with a capital T.
	ProductVPC: {"Vpc", "2016-04-28", "TagResources", "UnTagResources", "vpc"},
	ProductNAS: {"NAS", "2017-06-26", "TagResources", "UntagResources", "nas"},
	ProductSLB: {"Slb", "2014-05-15", "TagResources", "UntagResources", "slb"},
	ProductESS: {"Ess", "2014-08-28", "TagResources", "UntagResources", "ess"},
}

// tagRequest is TagResources or UntagResources on any product of tagAPIs: the SDK's RPC request
// with the parameters the products have in common (Tag for tagging, TagKey for untagging).
type tagRequest struct {
	*requests.RpcRequest
	ResourceType string     `position:"Query" name:"ResourceType"`
	ResourceID   *[]string  `position:"Query" name:"ResourceId" type:"Repeated"`
	Tag          *[]tagPair `position:"Query" name:"Tag" type:"Repeated"`
	TagKey       *[]string  `position:"Query" name:"TagKey" type:"Repeated"`
}

type tagPair struct {
	Key   string `name:"Key"`
	Value string `name:"Value"`
}

type tagResponse struct {
	*responses.BaseResponse
	RequestID string `json:"RequestId" xml:"RequestId"`
}

func (c *Client) newTagRequest(kind ResourceKind, untag bool, ids []string) (*tagRequest, error) {
	api, ok := tagAPIs[kind.product]
	if !ok {
		return nil, fmt.Errorf("tagging: no tag API for product %q", kind.product)
	}
	action := api.tagAction
	if untag {
		action = api.untagAction
	}
	req := &tagRequest{RpcRequest: &requests.RpcRequest{}, ResourceType: kind.resourceType, ResourceID: &ids}
	req.InitWithApiInfo(api.product, api.version, action, api.locationCode, "openAPI")
	req.Method = requests.POST
	req.RegionId = c.region
	return req, nil
}

// TagResources sets tags on objects of one kind, MaxTagResourceIDs per call. No call when there
// is nothing to set.
func (c *Client) TagResources(ctx context.Context, kind ResourceKind, ids []string, tags map[string]string) error {
	if len(ids) == 0 || len(tags) == 0 {
		return nil
	}
	pairs := make([]tagPair, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		pairs = append(pairs, tagPair{Key: k, Value: tags[k]})
	}
	for chunk := range slices.Chunk(ids, MaxTagResourceIDs) {
		chunk := slices.Clone(chunk)
		req, err := c.newTagRequest(kind, false, chunk)
		if err != nil {
			return err
		}
		req.Tag = &pairs
		if err := c.Call(ctx, req, &tagResponse{BaseResponse: &responses.BaseResponse{}}); err != nil {
			return fmt.Errorf("tagging %s %v: %w", kind.noun, chunk, err)
		}
	}
	return nil
}

// UntagResources removes tag keys from objects of one kind, MaxTagResourceIDs per call. No call
// when there is nothing to remove.
func (c *Client) UntagResources(ctx context.Context, kind ResourceKind, ids, keys []string) error {
	if len(ids) == 0 || len(keys) == 0 {
		return nil
	}
	for chunk := range slices.Chunk(ids, MaxTagResourceIDs) {
		chunk, keys := slices.Clone(chunk), slices.Clone(keys)
		req, err := c.newTagRequest(kind, true, chunk)
		if err != nil {
			return err
		}
		req.TagKey = &keys
		if err := c.Call(ctx, req, &tagResponse{BaseResponse: &responses.BaseResponse{}}); err != nil {
			return fmt.Errorf("removing tags %v from %s %v: %w", keys, kind.noun, chunk, err)
		}
	}
	return nil
}

// tagsOf turns the SDKs' tag lists (key and value under one of two spellings) into a map.
func tagsOf[T any](list []T, kv func(T) (string, string)) map[string]string {
	out := make(map[string]string, len(list))
	for _, t := range list {
		k, v := kv(t)
		out[k] = v
	}
	return out
}

// sortedKeys returns the keys of m in order, so requests built from maps are stable.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
