package emulator

import "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"

// The list readers of package core (core.Page, core.PageBounds), under the names ECS, still in
// this package, calls them by.

func (c *call) page(maxSize int) (number, size int, e *apiError) { return core.Page(c.p, maxSize) }

var pageBounds = core.PageBounds
