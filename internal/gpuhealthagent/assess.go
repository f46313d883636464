package gpuhealthagent

import (
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
)

// Finding is one GPU that must leave service, and why.
type Finding struct {
	GPU    string
	XID    int // the code behind it; 64 for a row-remap failure reported without one
	Name   string
	Action health.Action // ActionReset or ActionReplace
}

// Assess answers the GPUs whose state takes them out of service: a last XID the table maps to a
// reset or a replacement (a code it does not hold counts as a reset, as health.ActionUnlisted
// says), and a failed row remap, which is XID 64's condition (no spare rows: replace). XIDs that
// are the application's (13, 31, 43, 45) leave the GPU in service.
func Assess(readings []GPUReading) []Finding {
	var out []Finding
	for _, r := range readings {
		switch {
		case r.RowRemapFailure:
			row, _ := health.LookupXID(64)
			out = append(out, Finding{GPU: r.GPU, XID: 64, Name: row.Name, Action: health.ActionReplace})
		case r.LastXID != 0:
			action := health.ClassifyXID(r.LastXID)
			if action == health.ActionNone {
				continue
			}
			name := "an XID the agent's table does not hold"
			if row, ok := health.LookupXID(r.LastXID); ok {
				name = row.Name
			}
			if action == health.ActionUnlisted {
				action = health.ActionReset
			}
			out = append(out, Finding{GPU: r.GPU, XID: r.LastXID, Name: name, Action: action})
		}
	}
	return out
}

// worst is the strongest action of the findings: a replacement over a reset; "" for none.
func worst(findings []Finding) (health.Action, Finding) {
	var action health.Action
	var which Finding
	for _, f := range findings {
		if action == "" || (f.Action == health.ActionReplace && action != health.ActionReplace) {
			action, which = f.Action, f
		}
	}
	return action, which
}

// describe is the condition's message: each failing GPU, its XID and what it asks for.
func describe(findings []Finding) string {
	parts := make([]string, len(findings))
	for i, f := range findings {
		parts[i] = fmt.Sprintf("GPU %s: XID %d (%s): %s", f.GPU, f.XID, f.Name, f.Action)
	}
	return strings.Join(parts, "; ")
}
