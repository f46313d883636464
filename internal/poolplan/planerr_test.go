package poolplan

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr/planerrtest"
)

// Asking for more nodes than the placement groups hold is an error on the pool's size, as data.
func TestSplitOverflowNamesSize(t *testing.T) {
	_, err := Split(45, []Slot{{DeploymentSetID: "ds-1", Free: 20}, {DeploymentSetID: "ds-2", Free: 20}})
	planerrtest.AssertAttribute(t, err, "size", "45")
}
