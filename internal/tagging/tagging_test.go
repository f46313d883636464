package tagging

import (
	"maps"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

func TestUserTagsDropsReservedKeysAndTemplateLabels(t *testing.T) {
	all := map[string]string{Pool: "np-1", ManagedBy: ManagedByVal, bootstrap.PoolLabel: "gpu", "team": "ml"}
	if got, want := UserTags(all), map[string]string{"team": "ml"}; !maps.Equal(got, want) {
		t.Errorf("UserTags = %v, want %v", got, want)
	}
}

func TestMergeLaterMapsWin(t *testing.T) {
	got := Merge(map[string]string{"a": "1", "b": "1"}, map[string]string{"b": "2"})
	if want := map[string]string{"a": "1", "b": "2"}; !maps.Equal(got, want) {
		t.Errorf("Merge = %v, want %v", got, want)
	}
}
