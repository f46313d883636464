package cloud

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
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
	KindSecurityGroup = ResourceKind{ProductECS, "securitygroup", "security group"}
	KindVPC           = ResourceKind{ProductVPC, "VPC", "VPC"}
	KindVSwitch       = ResourceKind{ProductVPC, "VSWITCH", "vSwitches"}
	KindFileSystem    = ResourceKind{ProductNAS, "filesystem", "file system"}
	KindNATGateway    = ResourceKind{ProductVPC, "NATGATEWAY", "NAT gateway"}
	KindEIP           = ResourceKind{ProductVPC, "EIP", "EIP"}
	// KindLoadBalancer is a Classic Load Balancer instance; the SLB tag API calls it "instance".
	KindLoadBalancer = ResourceKind{ProductSLB, "instance", "load balancer"}
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

// TagResources sets tags on objects of one kind, MaxTagResourceIDs per call. No call when there
// is nothing to set.
func (c *Client) TagResources(ctx context.Context, kind ResourceKind, ids []string, tags map[string]string) error {
	if len(ids) == 0 || len(tags) == 0 {
		return nil
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for chunk := range slices.Chunk(ids, MaxTagResourceIDs) {
		chunk := slices.Clone(chunk)
		var err error
		switch kind.product {
		case ProductECS:
			req := ecs.CreateTagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId = c.region, kind.resourceType, &chunk
			list := make([]ecs.TagResourcesTag, 0, len(keys))
			for _, k := range keys {
				list = append(list, ecs.TagResourcesTag{Key: k, Value: tags[k]})
			}
			req.Tag = &list
			err = c.Call(ctx, req, ecs.CreateTagResourcesResponse())
		case ProductVPC:
			req := vpc.CreateTagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId = c.region, kind.resourceType, &chunk
			list := make([]vpc.TagResourcesTag, 0, len(keys))
			for _, k := range keys {
				list = append(list, vpc.TagResourcesTag{Key: k, Value: tags[k]})
			}
			req.Tag = &list
			err = c.Call(ctx, req, vpc.CreateTagResourcesResponse())
		case ProductNAS:
			req := nas.CreateTagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId = c.region, kind.resourceType, &chunk
			list := make([]nas.TagResourcesTag, 0, len(keys))
			for _, k := range keys {
				list = append(list, nas.TagResourcesTag{Key: k, Value: tags[k]})
			}
			req.Tag = &list
			err = c.Call(ctx, req, nas.CreateTagResourcesResponse())
		case ProductSLB:
			req := slb.CreateTagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId = c.region, kind.resourceType, &chunk
			list := make([]slb.TagResourcesTag, 0, len(keys))
			for _, k := range keys {
				list = append(list, slb.TagResourcesTag{Key: k, Value: tags[k]})
			}
			req.Tag = &list
			err = c.Call(ctx, req, slb.CreateTagResourcesResponse())
		default:
			return fmt.Errorf("tagging: no tag API for product %q", kind.product)
		}
		if err != nil {
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
		var err error
		switch kind.product {
		case ProductECS:
			req := ecs.CreateUntagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId, req.TagKey = c.region, kind.resourceType, &chunk, &keys
			err = c.Call(ctx, req, ecs.CreateUntagResourcesResponse())
		case ProductVPC:
			req := vpc.CreateUnTagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId, req.TagKey = c.region, kind.resourceType, &chunk, &keys
			err = c.Call(ctx, req, vpc.CreateUnTagResourcesResponse())
		case ProductNAS:
			req := nas.CreateUntagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId, req.TagKey = c.region, kind.resourceType, &chunk, &keys
			err = c.Call(ctx, req, nas.CreateUntagResourcesResponse())
		case ProductSLB:
			req := slb.CreateUntagResourcesRequest()
			req.RegionId, req.ResourceType, req.ResourceId, req.TagKey = c.region, kind.resourceType, &chunk, &keys
			err = c.Call(ctx, req, slb.CreateUntagResourcesResponse())
		default:
			return fmt.Errorf("untagging: no tag API for product %q", kind.product)
		}
		if err != nil {
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
