package provider

import (
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// planErrorPath is the attribute a planning package's error is about, read from the error's
// data (planerr.Error.Path), never from its message. fallback is used when err carries no path.
func planErrorPath(err error, fallback path.Path) path.Path {
	pe, ok := planerr.As(err)
	if !ok || pe.Path == "" {
		return fallback
	}
	return attributePath(pe.Path)
}

// attributePath turns a planerr path ("object_lifecycle.ia_after_days", "data_disks[1].size_gib")
// into the framework's path.
func attributePath(p string) path.Path {
	var out path.Path
	for i, step := range strings.Split(p, ".") {
		name, index, hasIndex := strings.Cut(step, "[")
		if i == 0 {
			out = path.Root(name)
		} else {
			out = out.AtName(name)
		}
		if hasIndex {
			if n, err := strconv.Atoi(strings.TrimSuffix(index, "]")); err == nil {
				out = out.AtListIndex(n)
			}
		}
	}
	return out
}
