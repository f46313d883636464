package emulator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// vendorBehaviour is one behaviour of the vendor's API that a client of it relies on and the
// emulator reproduces: where the vendor states it, and the tests of this package that prove
// the emulator does it.
type vendorBehaviour struct {
	behaviour string
	clients   string // who relies on it
	source    string // the vendor's statement of it
	tests     []string
}

// vendorBehaviours is the table of issue #32: what aliyun-cli, the Kubernetes Cluster
// Autoscaler's alicloud provider and this provider rely on. TestVendorBehaviours keeps every
// row's tests real.
var vendorBehaviours = []vendorBehaviour{
	{
		behaviour: "Endpoint discovery: Location DescribeEndpoints (2015-06-12; Id, ServiceCode, Type=openAPI) answers Endpoints.Endpoint[] {Endpoint, Id, Namespace, SerivceCode, Type, Protocols}; the resolver takes the first Endpoint when Success, and an empty list sends it to its local tables. The emulator answers its own address for every product it serves.",
		clients:   "Cluster Autoscaler alicloud provider (its copy of the Go SDK's resolver), aliyun Go SDK",
		source:    "https://github.com/aliyun/alibaba-cloud-sdk-go/blob/master/sdk/endpoints/location_resolver.go",
		tests:     []string{"TestLocationEndpointDiscovery", "TestLocationDescribeEndpointsAnswer", "TestLocationServiceCodesCoverServedProducts", "TestInterceptedSDKReachesTheEmulator"},
	},
	{
		behaviour: "Instance RAM role keys from the metadata service: the role listed at meta-data/ram/security-credentials/, its STS keys at .../security-credentials/<role>, which the Cluster Autoscaler asks for as meta-data/Ram/security-credentials/<role>.",
		clients:   "Cluster Autoscaler alicloud provider (its instance-RAM-role mode), this provider's nodes",
		source:    "https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.36.1/cluster-autoscaler/cloudprovider/alicloud/metadata/metadata.go",
		tests:     []string{"TestMetadataRoleKeys", "TestMetadataRoleKeysCapitalRamItem"},
	},
	{
		behaviour: "Page-number paging: DescribeInstanceStatus pages with PageNumber (from 1) and PageSize (1-50, default 10), answers TotalCount, filters by ZoneId and InstanceId.N, and refuses an unknown zone with InvalidZoneId.NotFound.",
		clients:   "Cluster Autoscaler alicloud provider, aliyun-cli",
		source:    "https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancestatus",
		tests:     []string{"TestDescribeInstanceStatus"},
	},
	{
		behaviour: "Token paging: MaxResults/NextToken, a NextToken on every page but the last, MaxResults outside its range clamped rather than refused, a malformed token refused with InvalidNextToken.Malformed.",
		clients:   "this provider (DescribeInstances, DescribeSecurityGroups, ListTagResources), aliyun-cli --pager (follows NextToken alone, so DescribeInstances answers one to page-number requests too)",
		source:    "https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstances",
		tests:     []string{"TestDescribeInstancesFiltersAndPaging", "TestDescribeInstancesPageNumberAnswersNextToken", "TestDescribeInstancesEmptyIdsAndClampedMaxResults", "TestDescribeSecurityGroupsPaging"},
	},
	{
		behaviour: "Token paging of DescribeInstanceTypes: MaxResults 1-1600 (default 1600) and NextToken from the previous answer, none on the first call; the pages together are the unpaged answer, a malformed token is refused with InvalidNextToken.Malformed.",
		clients:   "this provider (gpucluster_instance_types collects every page), aliyun-cli --pager, the alibabacloud-go ECS SDK (DescribeInstanceTypesRequest.MaxResults/NextToken)",
		source:    "https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancetypes",
		tests:     []string{"TestDescribeInstanceTypesNextToken"},
	},
	{
		behaviour: "Page-number paging of SLB, ESS and NAS lists: DescribeLoadBalancers, DescribeScalingGroups and DescribeFileSystems page with PageNumber and PageSize and answer TotalCount, PageNumber and PageSize; a page past the last is an empty list.",
		clients:   "Cluster Autoscaler alicloud provider (DescribeScalingGroups), this provider, aliyun-cli",
		source:    "https://www.alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-describeloadbalancers",
		tests:     []string{"TestDarabonbaSLB", "TestDarabonbaESS", "TestDarabonbaNASPaging"},
	},
	{
		behaviour: "Caller identity: STS GetCallerIdentity answers IdentityType Account for the account's key and AssumedRoleUser (Arn acs:ram::<account>:assumed-role/<role>/<session>) for an AssumeRole key; AssumeRole refuses a malformed RoleArn with InvalidParameter.RoleArn.",
		clients:   "aliyun-cli (sts GetCallerIdentity), this provider (its account check), the alibabacloud-go STS SDK",
		source:    "https://www.alibabacloud.com/help/en/ram/developer-reference/api-sts-2015-04-01-getcalleridentity",
		tests:     []string{"TestGetCallerIdentityThroughTheSDK", "TestDarabonbaSTS"},
	},
	{
		behaviour: "The vendor's generated clients' requests: V3 (ACS3-HMAC-SHA256, parameters in the query string) for ecs-20140526, vpc-20160428, sts-20150401, slb-20140515 and nas-20170626; V1 (HMAC-SHA1, the request model as a form body) for ess-20140828; error answers carry the vendor's Code.",
		clients:   "the alibabacloud-go (darabonba) SDKs, aliyun-cli",
		source:    "https://www.alibabacloud.com/help/en/sdk/product-overview/v3-request-structure-and-signature",
		tests:     []string{"TestV3WireShape", "TestV3SDKDefaultECS", "TestV3SDKDefaultVPC", "TestV3SDKDefaultNAS", "TestDarabonbaNASPaging", "TestDarabonbaSTS", "TestDarabonbaSLB", "TestDarabonbaESS"},
	},
	{
		behaviour: "Empty lists: a repeated field with no entries is an empty list inside its wrapper object (\"NatGatewayIds\": {\"NatGatewayIds\": []}), never null, in every product's answers.",
		clients:   "aliyun-cli (prints and filters the JSON), any client that walks the JSON",
		source:    "https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describevpcs",
		tests:     []string{"TestEmptyListsOnTheWire", "TestConformance", "TestESSConformance"},
	},
	{
		behaviour: "Answer shape: each answer carries the fields of the vendor's per-action response model and no others; an ESS scaling configuration's Tags are {Key, Value}, a scaling group's {TagKey, TagValue, Propagate}.",
		clients:   "the alibabacloud-go SDKs (typed models), aliyun-cli",
		source:    "https://github.com/alibabacloud-go/ecs-20140526",
		tests:     []string{"TestConformance", "TestPruneAnswer", "TestESSConformance", "TestDarabonbaESS"},
	},
	{
		behaviour: "Instance type figures in the reference's units: MemorySize and GPUMemorySize (per GPU) in GiB, InstanceBandwidthRx/Tx in Kbit/s; MinimumGPUAmount filters.",
		clients:   "Cluster Autoscaler alicloud provider (node memory = MemorySize GiB, GPUAmount), this provider",
		source:    "https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancetypes",
		tests:     []string{"TestDescribeInstanceTypesUnits", "TestDescribeInstanceTypesGPUFilter", "TestCatalog"},
	},
	{
		behaviour: "Error codes of a launch: OperationDenied.NoStock and the zone and type refusals, and IdempotentParameterMismatch for a ClientToken reused with other parameters.",
		clients:   "Cluster Autoscaler alicloud provider (through ESS scaling activities), this provider",
		source:    "https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances",
		tests:     []string{"TestStockOutCodes", "TestIdempotentParameterMismatch", "TestESSStockOutFallsBackToNextZoneAndType"},
	},
	{
		behaviour: "Scaling: ESS ExecuteScalingRule/ScaleWithAdjustment need an Active group with no activity in progress, clamp to MinSize/MaxSize, and run as activities that end Successful, Warning, Failed or Rejected.",
		clients:   "Cluster Autoscaler alicloud provider",
		source:    "https://help.aliyun.com/zh/auto-scaling/developer-reference/api-ess-2014-08-28-scalewithadjustment",
		tests:     []string{"TestESSAutoscalerScaleOutAndIn", "TestESSMinSizeAndBounds"},
	},
}

// TestVendorBehaviours holds the table to the code: every row cites a vendor source and names
// tests that exist in this package.
func TestVendorBehaviours(t *testing.T) {
	have := packageTests(t)
	for _, b := range vendorBehaviours {
		if !strings.HasPrefix(b.source, "https://") || b.clients == "" || len(b.tests) == 0 {
			t.Errorf("%.60q: a row needs its clients, a vendor source URL and at least one test", b.behaviour)
		}
		for _, name := range b.tests {
			if !have[name] {
				t.Errorf("%.60q names %s, which is not a test of this package", b.behaviour, name)
			}
		}
	}
}

// packageTests answers the Test functions declared in this package's test files.
func packageTests(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	must(t, err)
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		must(t, err)
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				out[fn.Name.Name] = true
			}
		}
	}
	return out
}
