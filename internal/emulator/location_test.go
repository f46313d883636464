package emulator

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/endpoints"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/responses"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	locsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/location"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/location"
)

// TestLocationEndpointDiscovery runs the vendor Go SDK's own location resolver
// (sdk/endpoints/location_resolver.go, which the Cluster Autoscaler's alicloud provider carries a
// copy of) against the emulator, for every product it serves: the resolver's request reaches
// the emulator as a client configured with the emulator as its Location endpoint sends it, and
// the endpoint it resolves is the emulator's own address, where an ECS call then succeeds.
func TestLocationEndpointDiscovery(t *testing.T) {
	e := newEnv(t, Config{})
	client, err := sdk.NewClientWithOptions(testRegion, sdkConfig(), credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	must(t, err)
	// The resolver names location-readonly.aliyuncs.com over HTTPS; this client reaches its
	// Location service at the emulator instead, as a client pointed at the emulator does.
	viaEmulator := func(r *requests.CommonRequest) (*responses.CommonResponse, error) {
		if r.Product != "Location" {
			t.Fatalf("the resolver called %s, not Location", r.Product)
		}
		r.Domain, r.Scheme = e.host, requests.HTTP
		return client.ProcessCommonRequest(r)
	}
	for _, code := range location.ServiceCodes {
		// The resolver caches by Product#RegionId for an hour: a product name of this server
		// alone keeps a second run (-count=2) from reading the first one's address.
		got, ok, err := (&endpoints.LocationResolver{}).TryResolve(&endpoints.ResolveParam{
			Product: code + "@" + e.host, RegionId: testRegion, LocationProduct: code, LocationEndpointType: "openAPI", CommonApi: viaEmulator})
		if err != nil || !ok || got != e.host {
			t.Errorf("%s: resolved %q (supported %v, %v), want the emulator's address %s", code, got, ok, err, e.host)
		}
	}

	ec, err := ecs.NewClientWithOptions(testRegion, sdkConfig(), credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	must(t, err)
	ec.Domain = e.host // the address resolved above
	_, err = ec.DescribeRegions(ecs.CreateDescribeRegionsRequest())
	must(t, err)
}

// TestLocationDescribeEndpointsAnswer holds the answer to the SDK's DescribeEndpointsResponse
// (no field it lacks, no null), and checks the filters: one product per ServiceCode, every
// product without one, and an empty list (which sends the resolver to its local tables) for a
// region the emulator does not serve or an endpoint type it has not.
func TestLocationDescribeEndpointsAnswer(t *testing.T) {
	e := newEnv(t, Config{})
	call := func(p params) locsdk.DescribeEndpointsResponse {
		t.Helper()
		a := e.rpc(versionLocation, "DescribeEndpoints", p)
		wantAnswer(t, a, 200, "")
		if nulls := nullPaths(decodeJSON(t, a.body), ""); len(nulls) > 0 {
			t.Errorf("null in the answer at %v: %s", nulls, a.body)
		}
		var out locsdk.DescribeEndpointsResponse
		dec := json.NewDecoder(bytes.NewReader(a.body))
		dec.DisallowUnknownFields()
		must(t, dec.Decode(&out))
		return out
	}
	one := call(params{"Id": testRegion, "ServiceCode": "ess", "Type": "openAPI"})
	if !one.Success || len(one.Endpoints.Endpoint) != 1 {
		t.Fatalf("ServiceCode=ess: %+v", one)
	}
	ep := one.Endpoints.Endpoint[0]
	if ep.Endpoint != e.host || ep.Id != testRegion || ep.SerivceCode != "ess" || ep.Type != "openAPI" || len(ep.Protocols.Protocols) == 0 {
		t.Fatalf("ServiceCode=ess: endpoint %+v", ep)
	}
	if all := call(params{"Id": testRegion}); len(all.Endpoints.Endpoint) != len(location.ServiceCodes) {
		t.Fatalf("without ServiceCode: %d endpoints, want one per product (%d)", len(all.Endpoints.Endpoint), len(location.ServiceCodes))
	}
	for _, p := range []params{
		{"Id": "us-east-1", "ServiceCode": "ecs"},
		{"Id": testRegion, "ServiceCode": "ecs", "Type": "innerAPI"},
		{"Id": testRegion, "ServiceCode": "rds"},
	} {
		if got := call(p); !got.Success || len(got.Endpoints.Endpoint) != 0 {
			t.Errorf("%v: want Success and no endpoint, got %+v", p, got)
		}
	}
}

// TestLocationServiceCodesCoverServedProducts fails when the emulator serves a product whose
// location service code DescribeEndpoints does not answer for.
func TestLocationServiceCodesCoverServedProducts(t *testing.T) {
	codes := strings.Join(location.ServiceCodes, ",")
	for version, host := range productHost {
		if version == versionLocation {
			continue
		}
		code, _, _ := strings.Cut(host, ".")
		if !strings.Contains(","+codes+",", ","+code+",") {
			t.Errorf("%s (%s) is served but location.ServiceCodes lacks %q", version, host, code)
		}
	}
}
