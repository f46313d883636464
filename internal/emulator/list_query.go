package emulator

import (
	"slices"
	"strings"
)

// What every Describe* list action reads before it filters: the page, the Tag.N filters and the
// ids asked for. One reader, so the actions agree on their errors and on what "no filter" means.

// page reads PageNumber/PageSize; maxSize is the action's cap (50 on most VPC and ECS lists, 100
// on NAS, SLB and EIP lists).
func (c *call) page(maxSize int) (number, size int, e *apiError) {
	if number, e = c.p.Int("PageNumber", 1); e != nil || number < 1 {
		return 0, 0, errInvalid("PageNumber", "must be a positive integer")
	}
	if size, e = c.p.Int("PageSize", 10); e != nil || size < 1 || size > maxSize {
		return 0, 0, errInvalid("PageSize", "must be 1-%d", maxSize)
	}
	return number, size, nil
}

func pageBounds(total, number, size int) (int, int) {
	lo := min((number-1)*size, total)
	return lo, min(lo+size, total)
}

// listQuery is a list action's page, tag filters and id filter.
type listQuery struct {
	number, size int
	tags         []tag
	// ids is nil when the request names no id: every object matches.
	ids []string
}

// listQuery reads the page (capped at maxPage), Tag.N and idParam, a comma-separated id list
// ("" when the action has no such parameter).
func (c *call) listQuery(idParam string, maxPage int) (listQuery, *apiError) {
	var q listQuery
	var e *apiError
	if q.number, q.size, e = c.page(maxPage); e != nil {
		return q, e
	}
	if q.tags, e = c.p.Tags("Tag"); e != nil {
		return q, e
	}
	if v := c.p[idParam]; idParam != "" && v != "" {
		q.ids = strings.Split(v, ",")
	}
	return q, nil
}

// match says whether an object with this id and these tags passes the id and tag filters: it must
// carry every Tag.N key with the value given (any value when none is).
func (q listQuery) match(id string, tags []tag) bool {
	return (q.ids == nil || contains(q.ids, id)) && matchTags(tags, q.tags)
}

// pageOf sorts the matches by id (the order the vendor's lists keep) and returns the asked page.
func pageOf[T any](q listQuery, list []T, id func(T) string) []T {
	slices.SortFunc(list, func(a, b T) int { return strings.Compare(id(a), id(b)) })
	lo, hi := pageBounds(len(list), q.number, q.size)
	return list[lo:hi]
}
