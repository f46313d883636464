package bootstrap

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

func TestCheckKubernetesUpgrade(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     string // "" = allowed; else words of the reason
	}{
		{"1.30", "1.30.14", ""},
		{"1.29", "1.30", ""},
		{"", "", ""}, // the default both times
		{"1.30", "", "skips 1.31, 1.32 from the nodes' 1.30"},
		{"1.28", "1.30", "skips 1.29 from the nodes' 1.28"},
		{"1.33", "1.30", "kubeadm does not downgrade"},
		{"1.30.2", "1.29.15", "kubeadm does not downgrade"},
	} {
		err := CheckKubernetesUpgrade(Versions{Kubernetes: c.from}, Versions{Kubernetes: c.to})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q -> %q refused: %v", c.from, c.to, err)
		case c.want != "":
			pe, ok := planerr.As(err)
			if !ok || pe.Path != "kubernetes" || !strings.Contains(pe.Why, c.want) || !strings.Contains(pe.Why, VersionSkewPolicy) {
				t.Errorf("%q -> %q = %v, want a refusal on kubernetes saying %q and naming the skew policy", c.from, c.to, err, c.want)
			}
		}
	}
	pe, _ := planerr.As(CheckKubernetesUpgrade(Versions{Kubernetes: "1.28"}, Versions{Kubernetes: "1.30"}))
	if pe == nil || pe.Fix != "apply each minor in turn: 1.29, then 1.30" {
		t.Errorf("fix = %+v, want the minors in turn", pe)
	}
}
