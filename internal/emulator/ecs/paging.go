package ecs

import (
	"strconv"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// tokenPaging is a MaxResults/NextToken page over a list in a stable order: the token is the
// offset of the next entry, opaque to clients.
type tokenPaging struct {
	offset, size int
}

// tokenPage reads MaxResults/NextToken when the request pages that way (ok is false when it
// sends neither). The vendor clamps MaxResults into [lo, hi] rather than refusing it.
func (c *call) tokenPage(def, lo, hi int) (pg tokenPaging, ok bool, e *core.Error) {
	if c.P["MaxResults"] == "" && c.P["NextToken"] == "" {
		return pg, false, nil
	}
	n, e := c.P.Int("MaxResults", def)
	if e != nil {
		return pg, false, e
	}
	if n < 1 {
		n = def
	}
	pg.size = min(max(n, lo), hi)
	if tok := c.P["NextToken"]; tok != "" {
		off, err := strconv.ParseUint(tok, 36, 31)
		if err != nil {
			return pg, false, core.Errf(400, "InvalidNextToken.Malformed", "The specified NextToken is not valid.")
		}
		pg.offset = int(off)
	}
	return pg, true, nil
}

// bounds answers the slice of a list of total entries this page covers and the token of the
// next page ("" on the last).
func (pg tokenPaging) bounds(total int) (lo, hi int, next string) {
	lo = min(pg.offset, total)
	hi = min(lo+pg.size, total)
	if hi < total {
		next = strconv.FormatUint(uint64(hi), 36)
	}
	return lo, hi, next
}
