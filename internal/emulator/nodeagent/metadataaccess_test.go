package nodeagent

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

// Which rules keep pods from the metadata service: a drop in a chain pod traffic takes and the
// host's does not, set by a unit the script enables.
func TestPodsReachMetadata(t *testing.T) {
	unit := func(cmd string) string {
		return "[Service]\nType=oneshot\nExecStart=/bin/sh -c '" + cmd + "'\n"
	}
	const path = "/etc/systemd/system/guard.service"
	enabled := "systemctl enable --now guard.service\n"
	for _, c := range []struct {
		name, rule, script string
		reach              bool
	}{
		{"raw PREROUTING drop", "iptables -t raw -I PREROUTING -d 100.100.100.200/32 -j DROP", enabled, false},
		{"mangle PREROUTING reject", "iptables -t mangle -A PREROUTING -d 100.100.100.200 -j REJECT", enabled, false},
		{"FORWARD inserted first", "iptables -I FORWARD 1 -s 10.244.0.0/16 -d 100.100.100.200/32 -j DROP", enabled, false},
		{"FORWARD appended after the CNI's accepts", "iptables -A FORWARD -d 100.100.100.200/32 -j DROP", enabled, true},
		{"OUTPUT drops the host, not pods", "iptables -t raw -I OUTPUT -d 100.100.100.200/32 -j DROP", enabled, true},
		{"another address", "iptables -t raw -I PREROUTING -d 100.100.100.201/32 -j DROP", enabled, true},
		{"an accept", "iptables -t raw -I PREROUTING -d 100.100.100.200/32 -j ACCEPT", enabled, true},
		{"a unit nobody enables", "iptables -t raw -I PREROUTING -d 100.100.100.200/32 -j DROP", "systemctl daemon-reload\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			reach, guard := podsReachMetadata(map[string]string{path: unit(c.rule)}, c.script)
			if reach != c.reach || (!reach && guard != "guard.service") {
				t.Errorf("podsReachMetadata = %v (guard %q), want %v", reach, guard, c.reach)
			}
		})
	}
}

// The bootstrap's nodes keep their pods from the metadata service; the same worker without the
// bootstrap's guard unit has a note that its pods read the node's user data and credentials.
func TestNodesKeepPodsFromMetadata(t *testing.T) {
	got := syncOnce(t, goodView(t), newFakeKube())
	for _, id := range []string{"i-cp", "i-gpu1"} {
		st := got[id]
		if st.Node == "" || st.PodsReachMetadata || strings.Contains(strings.Join(st.Notes, "\n"), "reach the instance metadata service") {
			t.Errorf("%s: node %q, pods reach metadata %v, notes %q: want registered, pods kept out", id, st.Node, st.PodsReachMetadata, st.Notes)
		}
	}

	ci, err := DecodeUserData(userData(t, gpuWorker(testCAs(t)[0])))
	if err != nil {
		t.Fatal(err)
	}
	delete(ci.Files, "/etc/systemd/system/"+bootstrap.MetadataGuardUnit)
	p, err := PlanNode(ci, "worker")
	if err != nil {
		t.Fatal(err)
	}
	if !p.PodsReachMetadata {
		t.Error("a worker without the guard unit keeps its pods from the metadata service")
	}
}

// The Cluster Autoscaler signs with the role it reads from the metadata service: as
// internal/manifests renders it (hostNetwork) it keeps it; on the pod network it would not.
func TestAutoscalerReachesMetadataFromTheHost(t *testing.T) {
	addon := autoscalerAddon(t, "25m")
	if notes := blockedMetadataClients([]Addon{{Name: "30-autoscaler.yaml", YAML: addon}}); len(notes) != 0 {
		t.Errorf("the rendered autoscaler is cut off from the metadata service: %q", notes)
	}
	podNetwork := strings.Replace(addon, "hostNetwork: true", "hostNetwork: false", 1)
	if podNetwork == addon {
		t.Fatalf("the rendered autoscaler sets no hostNetwork:\n%s", addon)
	}
	notes := blockedMetadataClients([]Addon{{Name: "30-autoscaler.yaml", YAML: podNetwork}})
	if len(notes) != 1 || !strings.Contains(notes[0], "Deployment cluster-autoscaler") || !strings.Contains(notes[0], "hostNetwork: true") {
		t.Errorf("notes for the autoscaler on the pod network = %q, want one naming the Deployment and the fix", notes)
	}
}
