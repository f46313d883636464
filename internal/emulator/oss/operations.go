package oss

import (
	"net/http"
	"sort"
)

// Operations lists the OSS operations the handler serves, found by asking
// the router itself about every method on the service, a bucket (bare, with
// each sub-resource OSS knows, and as a V2 listing) and an object, so a list
// printed for users cannot drift from what is routed.
func Operations() []string {
	methods := []string{http.MethodGet, http.MethodPut, http.MethodHead, http.MethodDelete, http.MethodPost}
	targets := []string{"/", "/bucket", "/bucket?list-type=2", "/bucket/key", "/bucket/key?objectMeta"}
	for sub := range knownBucketSubresources {
		targets = append(targets, "/bucket?"+sub)
	}
	seen := map[string]bool{}
	for _, m := range methods {
		for _, target := range targets {
			r, err := http.NewRequest(m, "http://oss"+target, nil)
			if err != nil {
				panic(err) // the targets above are fixed, valid URLs
			}
			if op := (&call{r: r}).route(); op.name != "Unsupported" {
				seen[op.name] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
