package emulator

import "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"

// The list readers of package core (core.Page, core.ReadListQuery), under the names the
// products still in this package call them by.

type listQuery = core.ListQuery

func (c *call) page(maxSize int) (number, size int, e *apiError) { return core.Page(c.p, maxSize) }

var pageBounds = core.PageBounds

func (c *call) listQuery(idParam string, maxPage int) (listQuery, *apiError) {
	return core.ReadListQuery(c.p, idParam, maxPage)
}

func pageOf[T any](q listQuery, list []T, id func(T) string) []T { return core.PageOf(q, list, id) }
