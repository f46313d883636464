package emulator

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// TestGetInstanceConsoleOutput: empty until something writes the console (no node agent: no
// bootstrap ran), then Base64 of what was written; an unknown instance is
// InvalidInstanceId.NotFound.
func TestGetInstanceConsoleOutput(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.0.0/20")
	resp, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1))
	must(t, err)
	id := resp.InstanceIdSets.InstanceIdSet[0]
	r := ecs.CreateGetInstanceConsoleOutputRequest()
	r.RegionId, r.InstanceId, r.RemoveSymbols = testRegion, id, "true"
	got, err := e.ecs.GetInstanceConsoleOutput(r)
	must(t, err)
	if got.ConsoleOutput != "" || got.InstanceId != id {
		t.Fatalf("before any output: %+v, want an empty console", got)
	}
	if _, err := time.Parse(core.TimeFormat, got.LastUpdateTime); err != nil {
		t.Errorf("LastUpdateTime %q: %v", got.LastUpdateTime, err)
	}
	e.s.SetConsoleOutput(id, "gpucluster-bootstrap: joined\n")
	got, err = e.ecs.GetInstanceConsoleOutput(r)
	must(t, err)
	if text, err := base64.StdEncoding.DecodeString(got.ConsoleOutput); err != nil || string(text) != "gpucluster-bootstrap: joined\n" {
		t.Errorf("ConsoleOutput %q decodes to %q, %v", got.ConsoleOutput, text, err)
	}
	r.InstanceId = "i-missing"
	_, err = e.ecs.GetInstanceConsoleOutput(r)
	wantCode(t, err, "InvalidInstanceId.NotFound")
}
