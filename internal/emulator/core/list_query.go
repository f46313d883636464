package core

import (
	"slices"
	"strings"
)

// What every Describe* list action reads before it filters: the page, the Tag.N filters and the
// ids asked for. One reader, so the actions agree on their errors and on what "no filter" means.

// Page reads PageNumber/PageSize; maxSize is the action's cap (50 on most VPC and ECS lists, 100
// on NAS, SLB and EIP lists).
func Page(p Params, maxSize int) (number, size int, e *Error) {
	if number, e = p.Int("PageNumber", 1); e != nil || number < 1 {
		return 0, 0, ErrInvalid("PageNumber", "must be a positive integer")
	}
	if size, e = p.Int("PageSize", 10); e != nil || size < 1 || size > maxSize {
		return 0, 0, ErrInvalid("PageSize", "must be 1-%d", maxSize)
	}
	return number, size, nil
}

// PageBounds answers the slice [lo, hi) of a list of total entries that page number holds.
func PageBounds(total, number, size int) (int, int) {
	lo := min((number-1)*size, total)
	return lo, min(lo+size, total)
}

// ListQuery is a list action's page, tag filters and id filter.
type ListQuery struct {
	Number, Size int
	Tags         []Tag
	// IDs is nil when the request names no id: every object matches.
	IDs []string
}

// ReadListQuery reads the page (capped at maxPage), Tag.N and idParam, a comma-separated id list
// ("" when the action has no such parameter).
func ReadListQuery(p Params, idParam string, maxPage int) (ListQuery, *Error) {
	var q ListQuery
	var e *Error
	if q.Number, q.Size, e = Page(p, maxPage); e != nil {
		return q, e
	}
	if q.Tags, e = p.Tags("Tag"); e != nil {
		return q, e
	}
	if v := p[idParam]; idParam != "" && v != "" {
		q.IDs = strings.Split(v, ",")
	}
	return q, nil
}

// Match says whether an object with this id and these tags passes the id and tag filters: it must
// carry every Tag.N key with the value given (any value when none is).
func (q ListQuery) Match(id string, tags []Tag) bool {
	return (q.IDs == nil || slices.Contains(q.IDs, id)) && MatchTags(tags, q.Tags)
}

// PageOf sorts the matches by id (the order the vendor's lists keep) and returns the asked page.
func PageOf[T any](q ListQuery, list []T, id func(T) string) []T {
	slices.SortFunc(list, func(a, b T) int { return strings.Compare(id(a), id(b)) })
	lo, hi := PageBounds(len(list), q.Number, q.Size)
	return list[lo:hi]
}
