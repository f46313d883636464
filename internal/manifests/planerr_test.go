package manifests

import (
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr/planerrtest"
)

// Bad input names the attribute, the value, why and the fix as data; a map entry's key is quoted
// in the path so the provider reads a key holding dots as one step.
func TestBadInputIsPlanerr(t *testing.T) {
	o := opts(catalog.ScenarioAITraining)
	o.MaxRuntime = 30 * time.Minute
	_, err := Render(o)
	planerrtest.AssertAttribute(t, err, "max_runtime", "30m0s")

	o = opts(catalog.ScenarioAITraining)
	o.NCCLEnv = map[string]string{"1nccl.debug": "INFO"}
	_, err = Render(o)
	planerrtest.AssertAttribute(t, err, `nccl_env["1nccl.debug"]`, "1nccl.debug")
}
