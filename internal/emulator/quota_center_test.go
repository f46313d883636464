package emulator

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/quotas"
)

func (e *env) quotasClient() *quotas.Client {
	e.t.Helper()
	c, err := quotas.NewClientWithOptions(testRegion, sdkConfig(), credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	must(e.t, err)
	c.Domain = e.host
	return c
}

// ListProductQuotas answers the vendor's default TotalQuota until PUT /_emulator/quota_center
// sets another, and counts TotalUsage from the region's live EIPs.
func TestQuotaCenterListProductQuotas(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.quotasClient()
	eipQuota := func() quotas.QuotasItemInListProductQuotas {
		t.Helper()
		r := quotas.CreateListProductQuotasRequest()
		r.ProductCode = "eip"
		out, err := c.ListProductQuotas(r)
		must(t, err)
		for _, q := range out.Quotas {
			if q.QuotaActionCode == "eip_quota_instances_num" {
				return q
			}
		}
		t.Fatalf("no eip_quota_instances_num among %+v", out.Quotas)
		return quotas.QuotasItemInListProductQuotas{}
	}
	if q := eipQuota(); q.TotalQuota != 20 || q.TotalUsage != 0 {
		t.Fatalf("default: quota %v usage %v; want 20 and 0", q.TotalQuota, q.TotalUsage)
	}
	if _, err := e.allocateEip("5", "PayByTraffic"); err != nil {
		t.Fatal(err)
	}
	put(t, e.srv.URL+"/_emulator/quota_center", `{"eip_quota_instances_num": 3}`)
	if q := eipQuota(); q.TotalQuota != 3 || q.TotalUsage != 1 {
		t.Fatalf("after PUT and one EIP: quota %v usage %v; want 3 and 1", q.TotalQuota, q.TotalUsage)
	}
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	e.createLB(e.slbClient(), f.vswID, "quota-lb")
	r := quotas.CreateListProductQuotasRequest()
	r.ProductCode = "slb"
	out, err := c.ListProductQuotas(r)
	must(t, err)
	if len(out.Quotas) != 1 || out.Quotas[0].QuotaActionCode != "slb_quota_instances_num" || out.Quotas[0].TotalQuota != 30 || out.Quotas[0].TotalUsage != 1 {
		t.Fatalf("slb quotas: %+v; want slb_quota_instances_num at 30 with 1 in use", out.Quotas)
	}
}

// The admin endpoint refuses a quota code the emulator does not serve, naming those it does.
func TestQuotaCenterAdminRefusesUnknownCode(t *testing.T) {
	e := newEnv(t, Config{})
	req, _ := http.NewRequest(http.MethodPut, e.srv.URL+"/_emulator/quota_center", strings.NewReader(`{"natgw_quota_nat_num": 1}`))
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "eip_quota_instances_num") {
		t.Fatalf("PUT of an unknown code: %d %s; want 400 naming the served codes", resp.StatusCode, b)
	}
}

// natgw_quota_nat_num_per_vpc answers the vendor's default of 5 until the admin endpoint sets
// another, and as usage the NAT gateways of the region's fullest VPC.
func TestQuotaCenterNATGatewaysPerVPC(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.quotasClient()
	natQuota := func() quotas.QuotasItemInListProductQuotas {
		t.Helper()
		r := quotas.CreateListProductQuotasRequest()
		r.ProductCode, r.QuotaActionCode = "nat", "natgw_quota_nat_num_per_vpc"
		out, err := c.ListProductQuotas(r)
		must(t, err)
		if len(out.Quotas) != 1 {
			t.Fatalf("nat quotas: %+v; want natgw_quota_nat_num_per_vpc only", out.Quotas)
		}
		return out.Quotas[0]
	}
	if q := natQuota(); q.TotalQuota != 5 || q.TotalUsage != 0 {
		t.Fatalf("default: quota %v usage %v; want 5 and 0", q.TotalQuota, q.TotalUsage)
	}
	a, b := e.netNetwork(), e.netNetwork()
	e.createNat(a, "nat-a1")
	e.createNat(a, "nat-a2")
	e.createNat(b, "nat-b1")
	put(t, e.srv.URL+"/_emulator/quota_center", `{"natgw_quota_nat_num_per_vpc": 2}`)
	if q := natQuota(); q.TotalQuota != 2 || q.TotalUsage != 2 {
		t.Fatalf("after PUT and 2+1 gateways in two VPCs: quota %v usage %v; want 2 and 2 (the fullest VPC)", q.TotalQuota, q.TotalUsage)
	}
}

// An ecs-spec GPU quota set as "<type>@<zone>" is answered for that zone with the dimensions the
// vendor's ecs-spec quotas carry, its usage the GPUs of the zone's pay-as-you-go instances of the
// type; a Dimensions filter the quota does not hold leaves it out.
func TestQuotaCenterSpecGPUs(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.quotasClient()
	const typ = "ecs.gn7i-c8g1.2xlarge" // 1 GPU
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	_, err := e.ecs.RunInstances(e.runReq(f, typ, 3))
	must(t, err)
	put(t, e.srv.URL+"/_emulator/quota_center", `{"`+typ+`@`+f.zone+`": 10}`)
	list := func(charge string) []quotas.QuotasItemInListProductQuotas {
		r := quotas.CreateListProductQuotasRequest()
		r.ProductCode = "ecs-spec"
		r.Dimensions = &[]quotas.ListProductQuotasDimensions{{Key: "regionId", Value: testRegion}, {Key: "chargeType", Value: charge}}
		out, err := c.ListProductQuotas(r)
		must(t, err)
		return out.Quotas
	}
	got := list("PostPaid")
	if len(got) != 1 || got[0].QuotaActionCode != typ || got[0].TotalQuota != 10 || got[0].TotalUsage != 3 || got[0].Dimensions["zoneId"] != f.zone {
		t.Fatalf("ecs-spec quotas: %+v; want %s in %s at 10 GPUs with 3 in use", got, typ, f.zone)
	}
	if got := list("PrePaid"); len(got) != 0 {
		t.Fatalf("chargeType PrePaid: %+v; want none", got)
	}
}
