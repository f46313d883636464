package emulator

import (
	"net/http"
	"strings"
	"testing"

	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// A type sold pay-as-you-go only: DescribeAvailableResource asked with a SpotStrategy leaves it
// out, a spot RunInstances of it fails with ecs.NoSpotCode, and pay-as-you-go still launches.
func TestNoSpotTypes(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	const typ = "ecs.gn6i-c4g1.xlarge"
	run := func(spot string) rpcAnswer {
		p := runParams(f)
		delete(p, "DryRun")
		p["SpotStrategy"] = spot
		return e.ecsCall("RunInstances", p)
	}
	spotOffered := func() (listed bool) {
		for _, r := range supportedInstanceTypes(t, e.ecsCall("DescribeAvailableResource", params{"DestinationResource": "InstanceType",
			"ZoneId": f.zone, "InstanceChargeType": "PostPaid", "SpotStrategy": "SpotAsPriceGo"})) {
			if r.Value == typ && r.Status == "Available" {
				listed = true
			}
		}
		return listed
	}
	// By default every type has spot.
	if !spotOffered() {
		t.Fatalf("%s not offered as spot by default", typ)
	}
	wantAnswer(t, run("SpotAsPriceGo"), 200, "")

	req, _ := http.NewRequest(http.MethodPut, e.srv.URL+"/_emulator/no_spot", strings.NewReader(`["`+typ+`"]`))
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin PUT: %d", resp.StatusCode)
	}
	if spotOffered() {
		t.Fatalf("%s still offered as spot after PUT /_emulator/no_spot", typ)
	}
	wantAnswer(t, run("SpotAsPriceGo"), 403, emuecs.NoSpotCode)
	wantAnswer(t, run("SpotWithPriceLimit"), 403, emuecs.NoSpotCode)
	wantAnswer(t, run("NoSpot"), 200, "")
	if err := e.s.SetNoSpot([]string{"ecs.nope.xlarge"}); err == nil {
		t.Fatal("a type outside the catalog was accepted")
	}
	must(t, e.s.SetNoSpot(nil))
	if !spotOffered() {
		t.Fatal("SetNoSpot(nil) did not sell spot again")
	}
}

// supportedInstanceTypes decodes a DescribeAvailableResource answer for one zone and
// DestinationResource InstanceType: its supported resources.
func supportedInstanceTypes(t *testing.T, a rpcAnswer) []struct{ Value, Status string } {
	t.Helper()
	var av struct {
		AvailableZones struct {
			AvailableZone []struct {
				AvailableResources struct {
					AvailableResource []struct {
						SupportedResources struct {
							SupportedResource []struct{ Value, Status string }
						}
					}
				}
			}
		}
	}
	decodeInto(t, a, &av)
	return av.AvailableZones.AvailableZone[0].AvailableResources.AvailableResource[0].SupportedResources.SupportedResource
}
