package emulator

import (
	"sort"
	"strconv"
	"strings"
)

// The tag APIs of ECS (TagResources / UntagResources / ListTagResources) and
// VPC (TagResources / UnTagResources / ListTagResources) share one engine:
// each product lists its resource types and how to find one record of a type.

// tagTarget is one taggable record in the caller's region.
type tagTarget struct {
	id   string
	tags []tag
	set  func([]tag)
}

// tagKind is one ResourceType a product's tag API accepts. A kind with nil
// find is a type the vendor accepts but the emulator does not model: no id of
// it exists, and listing it by tag finds nothing.
type tagKind struct {
	find func(c *call, id string) *tagTarget
	// all lists every record of the kind in c.region whose tags match filters,
	// ordered by id. Optional: without it, listing by tag finds nothing.
	all func(c *call, filters []tag) []tagTarget
}

// tagAPI is one product's tag operations.
type tagAPI struct {
	product string
	kinds   map[string]*tagKind
	// foldCase: the VPC API takes ResourceType in any case ("vswitch" is
	// VSWITCH); ECS spells its types in lower case and takes nothing else.
	foldCase bool
}

// Limits the vendor documents for both products' tag APIs.
const (
	maxTagResourceIDs = 50
	maxTagsPerCall    = 20
	maxTagsPerObject  = 20
	maxTagKeyLen      = 128
	maxTagValueLen    = 128
	tagListPageSize   = 50
)

// kind resolves ResourceType. An unknown type is answered 404
// InvalidResourceType.NotFound, as the vendor's tag APIs do.
func (a *tagAPI) kind(c *call) (string, *tagKind, *apiError) {
	typ, e := c.p.Required("ResourceType")
	if e != nil {
		return "", nil, e
	}
	canon := typ
	if a.foldCase {
		canon = strings.ToUpper(typ)
	}
	k, ok := a.kinds[canon]
	if !ok {
		names := make([]string, 0, len(a.kinds))
		for n := range a.kinds {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", nil, errf(404, "InvalidResourceType.NotFound",
			"The ResourceType %q provided does not exist in our records; %s takes one of %s.", typ, a.product, strings.Join(names, ", "))
	}
	return canon, k, nil
}

func (a *tagAPI) resourceIDs(c *call, required bool) ([]string, *apiError) {
	ids := c.p.List("ResourceId")
	if len(ids) == 0 && required {
		return nil, errMissing("ResourceId.1")
	}
	if len(ids) > maxTagResourceIDs {
		return nil, errInvalid("ResourceId", "at most %d resource ids, got %d", maxTagResourceIDs, len(ids))
	}
	return ids, nil
}

func (a *tagAPI) target(c *call, k *tagKind, id string) (*tagTarget, *apiError) {
	var t *tagTarget
	if k.find != nil {
		t = k.find(c, id)
	}
	if t == nil {
		return nil, errNotFound("InvalidResourceId.NotFound", id)
	}
	return t, nil
}

// checkTagKV applies the vendor's rules for a tag written by TagResources.
func checkTagKV(t tag) *apiError {
	lk := strings.ToLower(t.K)
	switch {
	case len(t.K) > maxTagKeyLen:
		return errf(400, "InvalidTagKey.Malformed", "Tag key %q is longer than %d characters.", t.K, maxTagKeyLen)
	case strings.HasPrefix(lk, "aliyun") || strings.HasPrefix(lk, "acs:"):
		return errf(400, "InvalidTagKey.Malformed", "Tag key %q must not start with aliyun or acs:.", t.K)
	case strings.Contains(lk, "http://") || strings.Contains(lk, "https://"):
		return errf(400, "InvalidTagKey.Malformed", "Tag key %q must not contain http:// or https://.", t.K)
	case len(t.V) > maxTagValueLen:
		return errf(400, "InvalidTagValue.Malformed", "The value of tag %q is longer than %d characters.", t.K, maxTagValueLen)
	}
	return nil
}

// tag adds or overwrites Tag.N on every ResourceId.N, all or nothing.
func (a *tagAPI) tag(c *call) *apiError {
	_, k, e := a.kind(c)
	if e != nil {
		return e
	}
	ids, e := a.resourceIDs(c, true)
	if e != nil {
		return e
	}
	tags, e := c.p.Tags("Tag")
	if e != nil {
		return e
	}
	if len(tags) == 0 {
		return errMissing("Tag.1.Key")
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
		nt := setTags(t.tags, tags)
		if len(nt) > maxTagsPerObject {
			return errf(400, "InvalidTagCount", "Resource %s would carry %d tags; at most %d.", id, len(nt), maxTagsPerObject)
		}
		set := t.set
		sets = append(sets, func() { set(nt) })
	}
	for _, f := range sets {
		f()
	}
	return nil
}

// untag removes TagKey.N (or every tag with All=true and no keys) from every
// ResourceId.N. Removing a key a resource does not carry is not an error.
func (a *tagAPI) untag(c *call, extraKeys ...string) *apiError {
	_, k, e := a.kind(c)
	if e != nil {
		return e
	}
	ids, e := a.resourceIDs(c, true)
	if e != nil {
		return e
	}
	keys := append(c.p.List("TagKey"), extraKeys...)
	if len(keys) > maxTagsPerCall {
		return errInvalid("TagKey", "at most %d keys, got %d", maxTagsPerCall, len(keys))
	}
	all, e := c.p.Bool("All", false)
	if e != nil {
		return e
	}
	// All only applies when no key is named.
	all = all && len(keys) == 0
	var targets []*tagTarget
	for _, id := range ids {
		t, e := a.target(c, k, id)
		if e != nil {
			return e
		}
		targets = append(targets, t)
	}
	for _, t := range targets {
		t.set(removeTags(t.tags, keys, all))
	}
	return nil
}

// tagRow is one (resource, tag) pair of a ListTagResources answer.
type tagRow struct{ typ, id, key, value string }

// tagFilters reads TagFilter.N.TagKey / TagFilter.N.TagValues.M (ECS only): a
// resource matches a filter when it carries the key with one of the values
// (any value when none is given).
type tagFilter struct {
	key    string
	values []string
}

func tagFiltersParam(c *call) ([]tagFilter, *apiError) {
	var out []tagFilter
	for _, m := range c.p.StructList("TagFilter") {
		f := tagFilter{key: m["TagKey"]}
		if f.key == "" {
			return nil, errMissing("TagFilter.N.TagKey")
		}
		sub := params{}
		for k, v := range m {
			sub[k] = v
		}
		f.values = sub.List("TagValues")
		out = append(out, f)
	}
	return out, nil
}

func matchTagFilters(have []tag, filters []tagFilter) bool {
	for _, f := range filters {
		ok := false
		for _, t := range have {
			if t.K == f.key && (len(f.values) == 0 || contains(f.values, t.V)) {
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

// list answers ListTagResources: the tags of ResourceId.N, or of every
// resource carrying Tag.N (and TagFilter.N), one row per tag, paged by
// NextToken. Ids that do not exist are left out rather than refused.
func (a *tagAPI) list(c *call, pageSize int, withTagFilter bool) ([]tagRow, string, *apiError) {
	typ, k, e := a.kind(c)
	if e != nil {
		return nil, "", e
	}
	ids, e := a.resourceIDs(c, false)
	if e != nil {
		return nil, "", e
	}
	filters, e := c.p.Tags("Tag")
	if e != nil {
		return nil, "", e
	}
	var tf []tagFilter
	if withTagFilter {
		if tf, e = tagFiltersParam(c); e != nil {
			return nil, "", e
		}
	}
	// Neither ResourceId.N nor Tag.N: every resource of the type, as the ECS, VPC and NAS models
	// require ResourceType only.
	var targets []tagTarget
	if len(ids) > 0 {
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] || k.find == nil {
				continue
			}
			seen[id] = true
			if t := k.find(c, id); t != nil && matchTags(t.tags, filters) {
				targets = append(targets, *t)
			}
		}
	} else if k.all != nil {
		targets = k.all(c, filters)
	}
	var rows []tagRow
	for _, t := range targets {
		if !matchTagFilters(t.tags, tf) {
			continue
		}
		for _, tg := range t.tags {
			rows = append(rows, tagRow{typ: typ, id: t.id, key: tg.K, value: tg.V})
		}
	}
	start := 0
	if tok := c.p["NextToken"]; tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n > len(rows) {
			return nil, "", errf(400, "InvalidNextToken.Malformed", "The specified NextToken is not valid.")
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
