package cloud

import (
	"testing"

	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// AccountAttributes reads the quotas the emulator was given and the vCPUs its instances use
// (three ecs.g7.xlarge, 4 vCPUs each).
func TestAccountAttributes(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	sgID, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: net.vpcID, Name: "quota"})
	if err != nil {
		t.Fatal(err)
	}
	runTestNodes(ctx, t, c, net, sgID, "quota-nodes", 3)
	if err := srv.SetQuotas(emuecs.Quotas{PostpaidVCPUs: 640, SpotVCPUs: 96, SecurityGroups: 7}); err != nil {
		t.Fatal(err)
	}
	zones, err := c.ZoneIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.AccountAttributes(ctx, zones[0])
	if err != nil {
		t.Fatal(err)
	}
	want := AccountQuotas{PostpaidVCPUs: 640, PostpaidVCPUsUsed: 12, SpotVCPUs: 96, SecurityGroups: 7, ENIs: emuecs.DefaultQuotas.ENIs}
	if q != want {
		t.Fatalf("quotas %+v, want %+v", q, want)
	}
}
