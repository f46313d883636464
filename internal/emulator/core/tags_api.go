package core

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The tag APIs of every product (TagResources / UntagResources / ListTagResources; the VPC API
// spells the second UnTagResources) share one engine: each product lists its resource types
// and how to find one record of a type. The engine is generic over the product's call type C so
// that a product not yet moved out of internal/emulator can use it with its own call.

// Caller is a handler's call: a *Call, or a call that carries one.
type Caller interface{ Core() *Call }

// Core answers c itself.
func (c *Call) Core() *Call { return c }

// TagTarget is one taggable record in the caller's region.
type TagTarget struct {
	ID   string
	Tags []Tag
	Set  func([]Tag)
}

// TagKind is one ResourceType a product's tag API accepts. A kind with nil
// find is a type the vendor accepts but the emulator does not model: no id of
// it exists, and listing it by tag finds nothing.
type TagKind[C Caller] struct {
	Find func(c C, id string) *TagTarget
	// all lists every record of the kind in c.region whose tags match filters,
	// ordered by id. Optional: without it, listing by tag finds nothing.
	All func(c C, filters []Tag) []TagTarget
}

// TagAPI is one product's tag operations.
type TagAPI[C Caller] struct {
	Product string
	Kinds   map[string]*TagKind[C]
	// foldCase: the VPC API takes ResourceType in any case ("vswitch" is
	// VSWITCH); ECS spells its types in lower case and takes nothing else.
	FoldCase bool
}

// Limits the vendor documents for both products' tag APIs.
const (
	MaxTagResourceIDs = 50
	MaxTagsPerCall    = 20
	MaxTagsPerObject  = 20
	MaxTagKeyLen      = 128
	MaxTagValueLen    = 128
	TagListPageSize   = 50
)

// kind resolves ResourceType. An unknown type is answered 404
// InvalidResourceType.NotFound, as the vendor's tag APIs do.
func (a *TagAPI[C]) kind(c C) (string, *TagKind[C], *Error) {
	typ, e := c.Core().P.Required("ResourceType")
	if e != nil {
		return "", nil, e
	}
	canon := typ
	if a.FoldCase {
		canon = strings.ToUpper(typ)
	}
	k, ok := a.Kinds[canon]
	if !ok {
		names := make([]string, 0, len(a.Kinds))
		for n := range a.Kinds {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", nil, Errf(404, "InvalidResourceType.NotFound",
			"The ResourceType %q provided does not exist in our records; %s takes one of %s.", typ, a.Product, strings.Join(names, ", "))
	}
	return canon, k, nil
}

func (a *TagAPI[C]) resourceIDs(c C, required bool) ([]string, *Error) {
	ids := c.Core().P.List("ResourceId")
	if len(ids) == 0 && required {
		return nil, ErrMissing("ResourceId.1")
	}
	if len(ids) > MaxTagResourceIDs {
		return nil, ErrInvalid("ResourceId", "at most %d resource ids, got %d", MaxTagResourceIDs, len(ids))
	}
	return ids, nil
}

func (a *TagAPI[C]) target(c C, k *TagKind[C], id string) (*TagTarget, *Error) {
	var t *TagTarget
	if k.Find != nil {
		t = k.Find(c, id)
	}
	if t == nil {
		return nil, ErrNotFound("InvalidResourceId.NotFound", id)
	}
	return t, nil
}

// checkTagKV applies the vendor's rules for a tag written by TagResources.
func checkTagKV(t Tag) *Error {
	lk := strings.ToLower(t.K)
	switch {
	case len(t.K) > MaxTagKeyLen:
		return Errf(400, "InvalidTagKey.Malformed", "Tag key %q is longer than %d characters.", t.K, MaxTagKeyLen)
	case strings.HasPrefix(lk, "aliyun") || strings.HasPrefix(lk, "acs:"):
		return Errf(400, "InvalidTagKey.Malformed", "Tag key %q must not start with aliyun or acs:.", t.K)
	case strings.Contains(lk, "http://") || strings.Contains(lk, "https://"):
		return Errf(400, "InvalidTagKey.Malformed", "Tag key %q must not contain http:// or https://.", t.K)
	case len(t.V) > MaxTagValueLen:
		return Errf(400, "InvalidTagValue.Malformed", "The value of tag %q is longer than %d characters.", t.K, MaxTagValueLen)
	}
	return nil
}

// kindAndIDs reads what Tag and Untag act on: ResourceType and ResourceId.N (required).
func (a *TagAPI[C]) kindAndIDs(c C) (*TagKind[C], []string, *Error) {
	_, k, e := a.kind(c)
	if e != nil {
		return nil, nil, e
	}
	ids, e := a.resourceIDs(c, true)
	return k, ids, e
}

// Tag adds or overwrites Tag.N on every ResourceId.N, all or nothing.
func (a *TagAPI[C]) Tag(c C) *Error {
	k, ids, e := a.kindAndIDs(c)
	if e != nil {
		return e
	}
	tags, e := c.Core().P.Tags("Tag")
	if e != nil {
		return e
	}
	if len(tags) == 0 {
		return ErrMissing("Tag.1.Key")
	}
	for _, t := range tags {
		if e := checkTagKV(t); e != nil {
			return e
		}
	}
	var sets []func()
	for _, id := range ids {
		t, e := a.target(c, k, id)
		if e != nil {
			return e
		}
		nt := SetTags(t.Tags, tags)
		if len(nt) > MaxTagsPerObject {
			return Errf(400, "InvalidTagCount", "Resource %s would carry %d tags; at most %d.", id, len(nt), MaxTagsPerObject)
		}
		set := t.Set
		sets = append(sets, func() { set(nt) })
	}
	for _, f := range sets {
		f()
	}
	return nil
}

// Untag removes TagKey.N (or every tag with All=true and no keys) from every
// ResourceId.N. Removing a key a resource does not carry is not an error.
func (a *TagAPI[C]) Untag(c C, extraKeys ...string) *Error {
	k, ids, e := a.kindAndIDs(c)
	if e != nil {
		return e
	}
	keys := append(c.Core().P.List("TagKey"), extraKeys...)
	if len(keys) > MaxTagsPerCall {
		return ErrInvalid("TagKey", "at most %d keys, got %d", MaxTagsPerCall, len(keys))
	}
	all, e := c.Core().P.Bool("All", false)
	if e != nil {
		return e
	}
	// All only applies when no key is named.
	all = all && len(keys) == 0
	var targets []*TagTarget
	for _, id := range ids {
		t, e := a.target(c, k, id)
		if e != nil {
			return e
		}
		targets = append(targets, t)
	}
	for _, t := range targets {
		t.Set(RemoveTags(t.Tags, keys, all))
	}
	return nil
}

// TagRow is one (resource, tag) pair of a ListTagResources answer.
type TagRow struct{ Type, ID, Key, Value string }

// tagFilters reads TagFilter.N.TagKey / TagFilter.N.TagValues.M (ECS only): a
// resource matches a filter when it carries the key with one of the values
// (any value when none is given).
type tagFilter struct {
	key    string
	values []string
}

func tagFiltersParam(c *Call) ([]tagFilter, *Error) {
	var out []tagFilter
	for _, m := range c.Core().P.StructList("TagFilter") {
		f := tagFilter{key: m["TagKey"]}
		if f.key == "" {
			return nil, ErrMissing("TagFilter.N.TagKey")
		}
		sub := Params{}
		for k, v := range m {
			sub[k] = v
		}
		f.values = sub.List("TagValues")
		out = append(out, f)
	}
	return out, nil
}

func matchTagFilters(have []Tag, filters []tagFilter) bool {
	for _, f := range filters {
		ok := false
		for _, t := range have {
			if t.K == f.key && (len(f.values) == 0 || slices.Contains(f.values, t.V)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// List answers ListTagResources: the tags of ResourceId.N, or of every
// resource carrying Tag.N (and TagFilter.N), one row per tag, paged by
// NextToken. Ids that do not exist are left out rather than refused.
func (a *TagAPI[C]) List(c C, pageSize int, withTagFilter bool) ([]TagRow, string, *Error) {
	typ, k, e := a.kind(c)
	if e != nil {
		return nil, "", e
	}
	ids, e := a.resourceIDs(c, false)
	if e != nil {
		return nil, "", e
	}
	filters, e := c.Core().P.Tags("Tag")
	if e != nil {
		return nil, "", e
	}
	var tf []tagFilter
	if withTagFilter {
		if tf, e = tagFiltersParam(c.Core()); e != nil {
			return nil, "", e
		}
	}
	// Neither ResourceId.N nor Tag.N: every resource of the type, as the ECS, VPC and NAS models
	// require ResourceType only.
	var targets []TagTarget
	if len(ids) > 0 {
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] || k.Find == nil {
				continue
			}
			seen[id] = true
			if t := k.Find(c, id); t != nil && MatchTags(t.Tags, filters) {
				targets = append(targets, *t)
			}
		}
	} else if k.All != nil {
		targets = k.All(c, filters)
	}
	var rows []TagRow
	for _, t := range targets {
		if !matchTagFilters(t.Tags, tf) {
			continue
		}
		for _, tg := range t.Tags {
			rows = append(rows, TagRow{Type: typ, ID: t.ID, Key: tg.K, Value: tg.V})
		}
	}
	start := 0
	if tok := c.Core().P["NextToken"]; tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n > len(rows) {
			return nil, "", Errf(400, "InvalidNextToken.Malformed", "The specified NextToken is not valid.")
		}
		start = n
	}
	end := min(start+pageSize, len(rows))
	next := ""
	if end < len(rows) {
		next = strconv.Itoa(end)
	}
	return rows[start:end], next, nil
}

// SortTargets orders targets by id, the order ListTagResources answers in.
func SortTargets(l []TagTarget) { sort.Slice(l, func(i, j int) bool { return l[i].ID < l[j].ID }) }

// TaggedTargets lists, in id order, the records among ids that carry tags matching filters:
// the All half of a TagKind, for records found by find.
func TaggedTargets[C Caller](c C, ids []string, filters []Tag, find func(C, string) *TagTarget) []TagTarget {
	var out []TagTarget
	for _, id := range ids {
		if t := find(c, id); t != nil && len(t.Tags) > 0 && MatchTags(t.Tags, filters) {
			out = append(out, *t)
		}
	}
	return out
}
