package cloud

import (
	"fmt"
)

// Every list in this package that takes more than one call goes through pageThrough: the vendor
// APIs page three ways (ECS, VPC, NAS, SLB and ESS lists by PageNumber/PageSize/TotalCount; some
// ECS calls by NextToken; OSS by markers with IsTruncated), and a hand-written loop per call
// each got its end condition slightly differently, and mostly had no guard against a server
// that keeps paging. Writing a new list is writing its fetch function for pageNumbers or
// pageTokens (or pageThrough for another cursor).

// maxPages bounds every list: 1,000 pages of 100 is 100,000 objects, far past any quota here
// (2,000 instances a scaling group). A list that reaches it is a service fault, not a big
// account. A variable so tests can lower it.
var maxPages = 1000

// pageThrough calls fetch with first, then with each cursor it returns, until it says there is
// no more, collecting the items. It stops early once it holds limit items (limit <= 0: all).
// A cursor seen before or more than maxPages pages is an error naming what was listed: a
// server that never ends paging must not turn into a loop that never ends.
func pageThrough[T any, C comparable](what string, first C, limit int, fetch func(cursor C) (items []T, next C, more bool, err error)) ([]T, error) {
	var out []T
	seen := map[C]bool{}
	cursor := first
	for page := 1; page <= maxPages; page++ {
		seen[cursor] = true
		items, next, more, err := fetch(cursor)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if !more || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("listing %s: the service returned the cursor %v of an earlier page again (page %d); this is a service fault, try again later", what, next, page)
		}
		cursor = next
	}
	return nil, fmt.Errorf("listing %s: the service was still paging after %d pages; this is a service fault, try again later", what, maxPages)
}

// pageNumbers lists by PageNumber (from 1) and PageSize. fetch asks for one page and returns the
// items it keeps (it may filter), how many the page held before filtering, and TotalCount. A
// short page or one reaching TotalCount is the last.
func pageNumbers[T any](what string, pageSize, limit int, fetch func(page int) (items []T, got, total int, err error)) ([]T, error) {
	return pageThrough(what, 1, limit, func(page int) ([]T, int, bool, error) {
		items, got, total, err := fetch(page)
		return items, page + 1, got >= pageSize && page*pageSize < total, err
	})
}

// pageTokens lists by NextToken: fetch asks for the page after token ("" for the first) and
// returns its items and the next token, "" after the last page. An empty page ends the list
// too, whatever the token says.
func pageTokens[T any](what string, limit int, fetch func(token string) (items []T, got int, next string, err error)) ([]T, error) {
	return pageThrough(what, "", limit, func(token string) ([]T, string, bool, error) {
		items, got, next, err := fetch(token)
		return items, next, next != "" && got > 0, err
	})
}
