package core

// Tag is one key/value pair; kept tiny because every instance carries a few.
type Tag struct {
	K string `json:"k"`
	V string `json:"v,omitempty"`
}

// Tags reads Tag.N.Key / Tag.N.Value (at most 20 as the vendor allows).
func (p Params) Tags(prefix string) ([]Tag, *Error) {
	var out []Tag
	for _, m := range p.StructList(prefix) {
		k := m["Key"]
		if k == "" {
			if m["Value"] != "" {
				return nil, ErrMissing(prefix + ".N.Key")
			}
			continue
		}
		out = append(out, Tag{K: k, V: m["Value"]})
	}
	if len(out) > 20 {
		return nil, Errf(400, "InvalidTagCount", "The number of tags (%d) exceeds 20.", len(out))
	}
	return out, nil
}

// SetTags returns a new slice (instances created together share one Tag
// slice, so it must never be changed in place).
func SetTags(cur []Tag, add []Tag) []Tag {
	cur = append([]Tag(nil), cur...)
	for _, t := range add {
		found := false
		for i := range cur {
			if cur[i].K == t.K {
				cur[i].V = t.V
				found = true
				break
			}
		}
		if !found {
			cur = append(cur, t)
		}
	}
	return cur
}

// RemoveTags drops the tags with the given keys, or every tag when all is set.
func RemoveTags(cur []Tag, keys []string, all bool) []Tag {
	if all {
		return nil
	}
	var out []Tag
	for _, t := range cur {
		keep := true
		for _, k := range keys {
			if t.K == k {
				keep = false
			}
		}
		if keep {
			out = append(out, t)
		}
	}
	return out
}

// MatchTags reports whether have satisfies every filter (a filter with an
// empty value matches any value of that key).
func MatchTags(have []Tag, filters []Tag) bool {
	for _, f := range filters {
		ok := false
		for _, t := range have {
			if t.K == f.K && (f.V == "" || t.V == f.V) {
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

// TagMap is the tags as a map, for the admin listings.
func TagMap(ts []Tag) map[string]string {
	m := make(map[string]string, len(ts))
	for _, t := range ts {
		m[t.K] = t.V
	}
	return m
}
