package images

import (
	"regexp"
	"strings"
	"testing"
)

// reference is the shape of a pinned reference: registry host, repository path, tag; no
// "latest", no digest-less short names.
var reference = regexp.MustCompile(`^[a-z0-9.-]+\.[a-z]+(:[0-9]+)?/[a-z0-9._-]+(/[a-z0-9._-]+)*:[A-Za-z0-9_.-]{1,128}$`)

func TestTableIsPinned(t *testing.T) {
	seen := map[string]bool{}
	for _, i := range All() {
		if seen[i.Name] {
			t.Errorf("image %q is in the table twice", i.Name)
		}
		seen[i.Name] = true
		if !reference.MatchString(i.Ref()) {
			t.Errorf("image %q: %q is not registry/repository:tag", i.Name, i.Ref())
		}
		if i.Tag == "latest" || strings.TrimSpace(i.Purpose) == "" {
			t.Errorf("image %q: tag %q purpose %q; pin a version and say what it is for", i.Name, i.Tag, i.Purpose)
		}
	}
	for _, name := range []string{Flannel, FlannelCNIPlugin, DevicePlugin, DCGMExporter, Prometheus, Alertmanager, Grafana,
		NodeExporter, PrometheusAdapter, Reaper, NCCLTests, HPCG, PyTorch, ClusterAutoscaler} {
		if !seen[name] {
			t.Errorf("constant %q has no row in the table", name)
		}
	}
	if len(Refs()) != len(All()) {
		t.Errorf("two rows share a reference")
	}
}

func TestGetPanicsOnUnknownName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Get of an unknown name did not panic")
		}
	}()
	Get("no-such-image")
}
