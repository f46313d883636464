package provider

import (
	"strings"
	"testing"
)

// FuzzParseAutoRelease feeds auto_release_after whatever a user might write. It never panics;
// an accepted duration lies within what ECS AutoReleaseTime takes and prints back to itself;
// a refused one says how to write it or which range is allowed. Seeds: testdata/fuzz/.
func FuzzParseAutoRelease(f *testing.F) {
	for _, s := range []string{"72h", "90m", "30m", "29m59s", "26280h", "26280h1ns", "soon", "", "-1h", "1e3h", "3 days", "1h30m", ".5h", "9223372036854775807ns", "99999999999h", "+45m0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseAutoRelease(s)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, `write it like "72h"`) && !strings.Contains(msg, "between 30m and 26280h") {
				t.Fatalf("parseAutoRelease(%q): error %q says neither how to write a duration nor the allowed range", s, msg)
			}
			return
		}
		if d < minAutoRelease || d > maxAutoRelease {
			t.Fatalf("parseAutoRelease(%q) = %s, outside [%s, %s]", s, d, minAutoRelease, maxAutoRelease)
		}
		again, err := parseAutoRelease(d.String())
		if err != nil || again != d {
			t.Fatalf("parseAutoRelease(%q) = %s, which does not parse back (%s, %v)", s, d, again, err)
		}
	})
}
