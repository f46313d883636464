// Package location is the emulator's Location service (API 2015-06-12): DescribeEndpoints, which
// the vendor's SDKs ask for a product's endpoint in a region when they have none configured. The
// Go SDK's location resolver (github.com/aliyun/alibaba-cloud-sdk-go, sdk/endpoints/
// location_resolver.go) sends Product "Location", Version 2015-06-12, ApiName DescribeEndpoints
// with Id=<region>, ServiceCode=<the request's location service code> and Type=openAPI (or the
// request's endpoint type), decodes the answer into its GetEndpointResponse and takes the first
// Endpoints.Endpoint[].Endpoint when Success is true; an empty list makes it fall through to its
// local tables. The Kubernetes Cluster Autoscaler's alicloud provider carries a copy of that
// resolver, so answering the emulator's own address here is what sends such a client to the
// emulator.
//
// The answer is the SDK's own services/location DescribeEndpointsResponse, whose Endpoint struct
// spells the service code field "SerivceCode" as the vendor's wire does (the resolver's own
// EndpointObj and the alibabacloud C# model DescribeEndpointsResponseBody spell it so too).
package location

import (
	locsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/location"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Version is the Location API version the SDK's resolver calls.
const Version = "2015-06-12"

func init() {
	// Id names the region, not RegionId: the dispatcher's region check does not apply.
	core.Register(Version, "DescribeEndpoints", core.Route{Fn: describeEndpoints, NoRegion: true, VendorModel: true})
}

// ServiceCodes are the location service codes of the products the emulator serves, as the SDK's
// own endpoint table records them ("location_service_code" in sdk/endpoints/endpoints_config.go)
// and its requests carry them (InitWithApiInfo's fourth argument, e.g. "ecs" for Ecs 2014-05-26).
// OSS is served as REST beside the RPC products; STS requests carry no service code in the Go SDK
// but the endpoint table names "sts". The Quota Center's requests carry "quotas"
// (its SDK's CreateListProductQuotasRequest).
var ServiceCodes = []string{"ecs", "vpc", "nas", "slb", "ess", "sts", "oss", "quotas"}

// endpointType is the only endpoint type the emulator has: the public API endpoint, the
// resolver's default Type.
const endpointType = "openAPI"

// protocols are the schemes the emulator's one listener takes; it is plain HTTP unless a TLS
// proxy sits in front, and the resolver reads only the Endpoint.
var protocols = []string{"HTTP", "HTTPS"}

func describeEndpoints(c *core.Call) (any, *core.Error) {
	region := c.P["Id"]
	code := c.P["ServiceCode"]
	typ := c.P["Type"]
	resp := &locsdk.DescribeEndpointsResponse{RequestId: c.ReqID, Success: true}
	// Always a list, never null: the resolver checks its length.
	resp.Endpoints.Endpoint = []locsdk.Endpoint{}
	if (typ != "" && typ != endpointType) || !servesRegion(c.Env, region) {
		return resp, nil // nothing of that kind here: the resolver falls back to its local tables
	}
	for _, sc := range ServiceCodes {
		if code != "" && code != sc {
			continue
		}
		ep := locsdk.Endpoint{Endpoint: c.Host, Id: region, Namespace: "", SerivceCode: sc, Type: endpointType}
		ep.Protocols.Protocols = append([]string(nil), protocols...)
		resp.Endpoints.Endpoint = append(resp.Endpoints.Endpoint, ep)
	}
	return resp, nil
}

// servesRegion reports whether the emulator serves region (Id); every served region has every
// product at the one address.
func servesRegion(env core.Env, region string) bool {
	for _, r := range env.Regions() {
		if r.ID == region {
			return true
		}
	}
	return false
}
