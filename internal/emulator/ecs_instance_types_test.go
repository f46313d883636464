package emulator

import (
	"strings"
	"testing"

	ecs7 "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"
	"github.com/alibabacloud-go/tea/tea"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

// TestDescribeInstanceTypesUnits holds DescribeInstanceTypes to the units of the vendor's API
// reference (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancetypes):
// GPUMemorySize in GiB per GPU (80 for an 80 GB A100-class GPU, not nvidia-smi's 81251 MiB),
// MemorySize in GiB, InstanceBandwidthRx/Tx in Kbit/s; a figure the catalog does not state is
// left out rather than answered as 0.
func TestDescribeInstanceTypesUnits(t *testing.T) {
	e := newEnv(t, Config{})
	r := ecs.CreateDescribeInstanceTypesRequest()
	r.RegionId = testRegion
	r.InstanceTypes = &[]string{"ecs.gn7e-c16g1.4xlarge", "ecs.gn7i-c8g1.2xlarge", "ecs.g7.xlarge"}
	resp, err := e.ecs.DescribeInstanceTypes(r)
	must(t, err)
	got := map[string]ecs.InstanceType{}
	for _, it := range resp.InstanceTypes.InstanceType {
		got[it.InstanceTypeId] = it
	}
	if it := got["ecs.gn7e-c16g1.4xlarge"]; it.GPUMemorySize != 80 || it.MemorySize != 125 || it.GPUAmount != 1 || it.InstanceBandwidthRx != 8*1024000 {
		t.Errorf("gn7e-c16g1.4xlarge: GPUMemorySize %v GiB, MemorySize %v GiB, GPUs %d, InstanceBandwidthRx %d Kbit/s; want 80, 125, 1, %d",
			it.GPUMemorySize, it.MemorySize, it.GPUAmount, it.InstanceBandwidthRx, 8*1024000)
	}
	if it := got["ecs.gn7i-c8g1.2xlarge"]; it.GPUMemorySize != 24 || it.InstanceBandwidthTx != 16*1024000 {
		t.Errorf("gn7i-c8g1.2xlarge: GPUMemorySize %v, InstanceBandwidthTx %d; want 24 GiB and %d Kbit/s", it.GPUMemorySize, it.InstanceBandwidthTx, 16*1024000)
	}
	body := resp.GetHttpContentString()
	for _, unstated := range []string{"EniQuantity", "EniPrivateIpAddressQuantity", "InstancePpsRx", "MaximumQueueNumberPerEni"} {
		if strings.Contains(body, `"`+unstated+`"`) {
			t.Errorf("%s is answered, but the catalog does not state it: %s", unstated, body)
		}
	}
	// g7 has no GPU and no bandwidth recorded: no GPU memory, no bandwidth, rather than 0 for them.
	if strings.Contains(body, `"InstanceTypeId":"ecs.g7.xlarge","GPUMemorySize"`) || got["ecs.g7.xlarge"].CpuCoreCount != 4 {
		t.Errorf("g7.xlarge: %+v", got["ecs.g7.xlarge"])
	}
}

// TestDescribeInstanceTypesGPUFilter asks for GPU types as the provider does
// (MinimumGPUAmount=1): every GPU type of the catalog and no CPU type.
func TestDescribeInstanceTypesGPUFilter(t *testing.T) {
	e := newEnv(t, Config{})
	r := ecs.CreateDescribeInstanceTypesRequest()
	r.RegionId, r.MinimumGPUAmount = testRegion, requests.NewInteger(1)
	resp, err := e.ecs.DescribeInstanceTypes(r)
	must(t, err)
	gpuTypes := 0 // the emulator serves the catalog's types (ecs TestCatalogMatchesProviderCatalog)
	for _, it := range catalog.InstanceTypes() {
		if it.IsGPU() {
			gpuTypes++
		}
	}
	for _, it := range resp.InstanceTypes.InstanceType {
		if it.GPUAmount < 1 {
			t.Errorf("MinimumGPUAmount=1 answered %s with %d GPUs", it.InstanceTypeId, it.GPUAmount)
		}
	}
	if len(resp.InstanceTypes.InstanceType) != gpuTypes {
		t.Fatalf("%d types, want the catalog's %d GPU types", len(resp.InstanceTypes.InstanceType), gpuTypes)
	}
	// No match: an empty list, as the vendor sends one.
	r.InstanceTypeFamily = "ecs.nosuchfamily"
	resp, err = e.ecs.DescribeInstanceTypes(r)
	must(t, err)
	if !strings.Contains(resp.GetHttpContentString(), `"InstanceTypes":{"InstanceType":[]}`) {
		t.Fatalf("no match: %s", resp.GetHttpContentString())
	}
}

// TestDescribeInstanceTypesNextToken pages DescribeInstanceTypes with the vendor's own newer SDK
// the way its request model describes (MaxResults 1-1600, default 1600; NextToken from the
// previous answer, none on the first call:
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancetypes):
// the pages together are the unpaged answer in the same order, every page but the last carries a
// NextToken, and a token the emulator did not hand out is refused as for DescribeInstances.
func TestDescribeInstanceTypesNextToken(t *testing.T) {
	v := newV3Env(t, Config{})
	ec := v.newECS(testAK, testSecret, "")
	ask := func(maxResults int64, token string) *ecs7.DescribeInstanceTypesResponseBody {
		t.Helper()
		r := &ecs7.DescribeInstanceTypesRequest{MinimumGPUAmount: dara.Int32(1)}
		if maxResults > 0 {
			r.MaxResults = dara.Int64(maxResults)
		}
		if token != "" {
			r.NextToken = dara.String(token)
		}
		resp, err := ec.DescribeInstanceTypes(r)
		must(t, err)
		return resp.Body
	}
	names := func(b *ecs7.DescribeInstanceTypesResponseBody) (out []string) {
		for _, it := range b.InstanceTypes.InstanceType {
			out = append(out, tea.StringValue(it.InstanceTypeId))
		}
		return out
	}
	whole := ask(0, "")
	all := names(whole)
	if len(all) < 7 || tea.StringValue(whole.NextToken) != "" {
		t.Fatalf("unpaged answer: %d types, NextToken %q; want every GPU type and no token", len(all), tea.StringValue(whole.NextToken))
	}
	var paged []string
	token, pages := "", 0
	for {
		b := ask(3, token)
		pages++
		got := names(b)
		token = tea.StringValue(b.NextToken)
		if len(got) > 3 || (token != "" && len(got) != 3) {
			t.Fatalf("page %d: %d types with NextToken %q for MaxResults 3", pages, len(got), token)
		}
		paged = append(paged, got...)
		if token == "" || pages > len(all) {
			break
		}
	}
	if strings.Join(paged, ",") != strings.Join(all, ",") || pages != (len(all)+2)/3 {
		t.Fatalf("%d pages of 3 gave %v; the unpaged answer is %v", pages, paged, all)
	}
	if got := names(ask(5000, "")); len(got) != len(all) {
		t.Fatalf("MaxResults above 1600 is clamped, not refused: %d of %d types", len(got), len(all))
	}
	_, err := ec.DescribeInstanceTypes(&ecs7.DescribeInstanceTypesRequest{NextToken: dara.String("not a token!")})
	wantV3Code(t, err, "InvalidNextToken.Malformed")
}
