package emulator

import (
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// attributes asks DescribeAccountAttributes for names and answers name -> first value.
func (e *env) attributes(zone string, names ...string) map[string]ecs.ValueItem {
	e.t.Helper()
	r := ecs.CreateDescribeAccountAttributesRequest()
	r.RegionId, r.ZoneId = testRegion, zone
	r.AttributeName = &names
	resp, err := e.ecs.DescribeAccountAttributes(r)
	must(e.t, err)
	out := map[string]ecs.ValueItem{}
	for _, it := range resp.AccountAttributeItems.AccountAttributeItem {
		if len(it.AttributeValues.ValueItem) == 0 {
			e.t.Fatalf("%s has no value", it.AttributeName)
		}
		out[it.AttributeName] = it.AttributeValues.ValueItem[0]
	}
	return out
}

// The used vCPUs are the live instances' (8 per gn7i-c8g1.2xlarge), pay-as-you-go and spot apart;
// the max are the quotas PUT /_emulator/quotas set; a launch beyond one fails with the vendor's
// quota code, and MinAmount takes what fits.
func TestAccountAttributesAndVCPUQuota(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	put(t, e.srv.URL+"/_emulator/quotas", `{"max-postpaid-instance-vcpu-count": 40, "max-spot-instance-vcpu-count": 16}`)
	_, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 3))
	must(t, err)
	spot := e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 1)
	spot.SpotStrategy = "SpotAsPriceGo"
	_, err = e.ecs.RunInstances(spot)
	must(t, err)

	got := e.attributes(f.zone, "max-postpaid-instance-vcpu-count", "used-postpaid-instance-vcpu-count",
		"max-spot-instance-vcpu-count", "used-spot-instance-vcpu-count")
	for name, want := range map[string]string{"max-postpaid-instance-vcpu-count": "40", "used-postpaid-instance-vcpu-count": "24",
		"max-spot-instance-vcpu-count": "16", "used-spot-instance-vcpu-count": "8"} {
		if got[name].Value != want || got[name].ZoneId != f.zone {
			t.Errorf("%s = %+v, want %s in %s", name, got[name], want, f.zone)
		}
	}

	// 16 pay-as-you-go vCPUs remain: three more need 24.
	r := e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 3)
	_, err = e.ecs.RunInstances(r)
	wantCode(t, err, "QuotaExceed.ElasticQuota")
	if !strings.Contains(err.Error(), "max-postpaid-instance-vcpu-count") {
		t.Fatalf("the refusal does not name the quota: %v", err)
	}
	r.MinAmount = requests.NewInteger(1)
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	if n := len(resp.InstanceIdSets.InstanceIdSet); n != 2 {
		t.Fatalf("quota-limited partial: %d, want 2", n)
	}
	// Spot has its own quota: 8 of 16 left, so two spot instances are one too many.
	spot = e.runReq(f, "ecs.gn7i-c8g1.2xlarge", 2)
	spot.SpotStrategy = "SpotAsPriceGo"
	_, err = e.ecs.RunInstances(spot)
	wantCode(t, err, "QuotaExceed.ElasticQuota")
}

// Every attribute is answered when none is named, and the GPU quota comes back through GET.
func TestAccountAttributesDefaults(t *testing.T) {
	e := newEnv(t, Config{GPUQuota: 64})
	got := e.attributes("")
	if len(got) != len(strings.Split("instance-network-type max-security-groups max-elastic-network-interfaces max-postpaid-instance-vcpu-count max-spot-instance-vcpu-count used-postpaid-instance-vcpu-count used-spot-instance-vcpu-count max-postpaid-yundisk-capacity used-postpaid-yundisk-capacity max-dedicated-hosts supported-postpaid-instance-types max-axt-command-count max-axt-invocation-daily real-name-authentication max-cloud-assistant-activation-count", " ")) {
		t.Fatalf("answered %d attributes: %v", len(got), got)
	}
	if got["max-postpaid-instance-vcpu-count"].Value != "2000000" || got["instance-network-type"].Value != "vpc" {
		t.Fatalf("defaults: %+v", got)
	}
	if q := e.s.Quotas(); q.GPUs != 64 {
		t.Fatalf("GPU quota %d, want the configured 64", q.GPUs)
	}
	put(t, e.srv.URL+"/_emulator/quotas", `{"gpu": 8}`)
	if q := e.s.Quotas(); q.GPUs != 8 || q.SpotVCPUs != 2_000_000 {
		t.Fatalf("after PUT: %+v", q)
	}
	if err := e.s.SetQuotas(emuecs.Quotas{GPUs: -1}); err == nil {
		t.Fatal("a negative quota was taken")
	}
}

func TestAccountAttributesRefusesUnknownName(t *testing.T) {
	e := newEnv(t, Config{})
	r := ecs.CreateDescribeAccountAttributesRequest()
	r.RegionId = testRegion
	r.AttributeName = &[]string{"max-instances"}
	_, err := e.ecs.DescribeAccountAttributes(r)
	wantCode(t, err, "InvalidParameter")
}
