package provider

import (
	"context"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// Small conversions every resource and data source uses, kept in one place.

// mdValues renders values as Markdown code spans: `a`, `b`, `c`.
func mdValues(values []string) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
}

// stringMap builds a map(string) value.
func stringMap(m map[string]string) types.Map {
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

// mapOf reads a map of strings; null or unknown reads as empty.
func mapOf(ctx context.Context, m basetypes.MapValue) (map[string]string, diag.Diagnostics) {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out, nil
	}
	diags := m.ElementsAs(ctx, &out, false)
	return out, diags
}

// listOf reads a list of strings; a list that is, or holds, an unknown value reads as empty
// (callers that must tell the difference ask hasUnknown).
func listOf(ctx context.Context, l basetypes.ListValue) ([]string, diag.Diagnostics) {
	var out []string
	if l.IsNull() || hasUnknown(l) {
		return out, nil
	}
	diags := l.ElementsAs(ctx, &out, false)
	return out, diags
}

// hasUnknown reports whether a list is unknown or holds an unknown element.
func hasUnknown(l basetypes.ListValue) bool {
	if l.IsUnknown() {
		return true
	}
	for _, e := range l.Elements() {
		if e.IsUnknown() {
			return true
		}
	}
	return false
}

// fullyKnown says whether every value, and everything nested in it, is known: what a planned value is
// made of must be, or the value planned would differ from the one applied (the node image's
// content digest).
func fullyKnown(ctx context.Context, values ...attr.Value) bool {
	for _, v := range values {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil || !tv.IsFullyKnown() {
			return false
		}
	}
	return true
}

// stringList builds a list(string) value.
func stringList(values []string) types.List {
	elems := make([]attr.Value, len(values))
	for i, v := range values {
		elems[i] = types.StringValue(v)
	}
	return types.ListValueMust(types.StringType, elems)
}

// sortedKeys returns a map's keys in order, for deterministic requests and output.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
