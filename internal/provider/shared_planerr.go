package provider

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// planErrorPath is the attribute a planning package's error is about, read from the error's
// data (planerr.Error.Path), never from its message. fallback is used when err carries no path
// or one that does not parse (a producer's bug, which should still give a diagnostic).
func planErrorPath(err error, fallback path.Path) path.Path {
	pe, ok := planerr.As(err)
	if !ok || pe.Path == "" {
		return fallback
	}
	p, perr := attributePath(pe.Path)
	if perr != nil {
		return fallback
	}
	return p
}

// addPlanError reports err on the attribute it names, or without one when it names none: the
// data sources and functions whose whole input is their own attributes.
func addPlanError(diags *diag.Diagnostics, err error, summary string) {
	if p := planErrorPath(err, path.Empty()); len(p.Steps()) > 0 {
		diags.AddAttributeError(p, summary, err.Error())
		return
	}
	diags.AddError(summary, err.Error())
}

// attributePath is the one parser of planerr paths (the grammar is in planerr's package
// comment): "object_lifecycle.ia_after_days", "data_disks[1].size_gib",
// `kubernetes.labels["gpucluster.io/x"]`. A bracket holding digits is a list index, a bracket
// holding a quoted string a map key, which may itself contain dots and brackets.
func attributePath(p string) (path.Path, error) {
	var out path.Path
	rest := p
	for first := true; ; first = false {
		end := strings.IndexAny(rest, `.[]"`)
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		if name == "" {
			return path.Empty(), fmt.Errorf("attribute path %q: empty attribute name at %q", p, rest)
		}
		if first {
			out = path.Root(name)
		} else {
			out = out.AtName(name)
		}
		rest = rest[end:]
		for strings.HasPrefix(rest, "[") {
			var err error
			if out, rest, err = element(out, rest[1:]); err != nil {
				return path.Empty(), fmt.Errorf("attribute path %q: %w", p, err)
			}
		}
		if rest == "" {
			return out, nil
		}
		var ok bool
		if rest, ok = strings.CutPrefix(rest, "."); !ok {
			return path.Empty(), fmt.Errorf("attribute path %q: %q is neither .name nor [element]", p, rest)
		}
	}
}

// element reads one bracketed step after its "[" and returns what follows its "]".
func element(out path.Path, rest string) (path.Path, string, error) {
	if strings.HasPrefix(rest, `"`) {
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return out, rest, fmt.Errorf("map key %s is not a Go quoted string", rest)
		}
		key, _ := strconv.Unquote(quoted) // QuotedPrefix has checked it
		after, ok := strings.CutPrefix(rest[len(quoted):], "]")
		if !ok {
			return out, rest, fmt.Errorf("map key %s is not closed by ]", quoted)
		}
		return out.AtMapKey(key), after, nil
	}
	digits, after, ok := strings.Cut(rest, "]")
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || n < 0 || strings.TrimLeft(digits, "0123456789") != "" {
		return out, rest, fmt.Errorf("[%s is neither a list index nor a quoted map key", rest)
	}
	return out.AtListIndex(n), after, nil
}
