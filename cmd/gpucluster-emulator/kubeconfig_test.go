package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// TestProgramRunsTheNodeAgentWithKubeconfig: with --kubeconfig of a real test cluster the program
// answers /_emulator/nodes, and its agent looks at the instances it serves: one made through the
// SDK without user data is reported, once Running, as running no node bootstrap.
func TestProgramRunsTheNodeAgentWithKubeconfig(t *testing.T) {
	tc := offlinekube.StartT(t, offlinekube.Options{})
	url, _ := startProgram(t, buildEmulator(t), "--kubeconfig", tc.Kubeconfig())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := cloud.New(ctx, cloud.Config{Region: "cn-wulanchabu", Endpoint: url, MaxRetries: 3, UserAgent: "emulator-test/0",
		Credentials: cloud.Credentials{AccessKeyID: "emulator", AccessKeySecret: "emulator-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	vpcID, err := c.CreateVPC(ctx, cloud.VPCInput{Name: "agent", CIDRBlock: "10.0.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	vswID, err := c.CreateVSwitch(ctx, cloud.VSwitchInput{VPCID: vpcID, ZoneID: "cn-wulanchabu-a", CIDRBlock: "10.0.1.0/24", Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	sgID, err := c.CreateSecurityGroup(ctx, cloud.SecurityGroupInput{VPCID: vpcID, Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.RunInstances(ctx, cloud.RunInstancesInput{ClientToken: "agent-0", InstanceType: "ecs.g7.xlarge", ZoneID: "cn-wulanchabu-a",
		ImageID: "ubuntu_22_04_x64_20G_alibase_20240101.vhd", SecurityGroupID: sgID, VSwitchID: vswID, Amount: 1, MinAmount: 1,
		SystemDisk: cloud.Disk{Category: "cloud_essd", SizeGiB: 40}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := http.Get(url + "/_emulator/nodes")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Nodes []struct {
				InstanceID string `json:"instance_id"`
				Reason     string `json:"reason"`
			} `json:"nodes"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /_emulator/nodes: %s, %v", resp.Status, err)
		}
		if len(body.Nodes) == 1 && body.Nodes[0].InstanceID == ids[0] && strings.HasPrefix(body.Nodes[0].Reason, "no user data") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the agent never reported %s as running no bootstrap: %+v", ids[0], body.Nodes)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestProgramRefusesAnUnreadableKubeconfig: a --kubeconfig that cannot be read stops the program
// with a message naming the file, before it listens.
func TestProgramRefusesAnUnreadableKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.kubeconfig")
	out, err := exec.Command(buildEmulator(t), "--listen", "127.0.0.1:0", "--kubeconfig", missing).CombinedOutput()
	if err == nil || !strings.Contains(string(out), missing) {
		t.Errorf("exit %v, output %q: want a failure naming %s", err, out, missing)
	}
}
