package bootstrap_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

// ParseRegistration reads back, from each rendered document of a whole cluster, the action, the
// endpoint, the pins and exactly the labels and taints the pool's identity decided.
func TestParseRegistrationWholeCluster(t *testing.T) {
	pools, caHash, _ := wholeCluster(t)
	for _, p := range pools {
		doc, _ := render(t, p)
		for name, userData := range map[string]string{"alone": doc, "merged": merged(t, doc)} {
			reg, err := bootstrap.ParseRegistration(userData)
			if err != nil {
				t.Fatalf("%s (%s): %v", p.name, name, err)
			}
			wantAction := map[string]string{"cp": bootstrap.KubeadmInit, "cp-join": bootstrap.KubeadmJoinControlPlane}[p.name]
			if wantAction == "" {
				wantAction = bootstrap.KubeadmJoin
			}
			if reg.Action != wantAction {
				t.Errorf("%s (%s): action %q, want %q", p.name, name, reg.Action, wantAction)
			}
			if reg.APIEndpoint != apiEndpoint || reg.Token != joinToken {
				t.Errorf("%s (%s): endpoint %q token %q, want %q and the cluster's token", p.name, name, reg.APIEndpoint, reg.Token, apiEndpoint)
			}
			if wantAction != bootstrap.KubeadmInit && (!slices.Equal(reg.CACertHashes, []string{caHash}) || reg.SkipsCAVerification) {
				t.Errorf("%s (%s): CA pins %v (skip %v), want [%s]", p.name, name, reg.CACertHashes, reg.SkipsCAVerification, caHash)
			}
			if !maps.Equal(reg.Labels, p.identity.Labels()) {
				t.Errorf("%s (%s): labels %v, want the identity's %v", p.name, name, reg.Labels, p.identity.Labels())
			}
			wantTaints := p.identity.Taints()
			if p.identity.Role == bootstrap.RoleControlPlane {
				wantTaints = append([]bootstrap.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: "NoSchedule"}}, wantTaints...)
			}
			if !slices.Equal(reg.Taints, wantTaints) {
				t.Errorf("%s (%s): taints %v, want %v", p.name, name, reg.Taints, wantTaints)
			}
			if wantAction == bootstrap.KubeadmInit {
				if reg.PodSubnet != "10.244.0.0/16" || !strings.Contains(reg.Files[bootstrap.AddonsDir+"/"+bootstrap.CNIAddonFile], "kube-flannel") {
					t.Errorf("%s (%s): pod subnet %q, CNI manifest decoded: %v", p.name, name, reg.PodSubnet, reg.Files[bootstrap.AddonsDir+"/"+bootstrap.CNIAddonFile] != "")
				}
			}
		}
	}
}

func merged(t *testing.T, ours string) string {
	t.Helper()
	doc, err := bootstrap.Merge(ours, "#!/bin/bash\necho user part\n")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestParseRegistrationRefusesForeignUserData(t *testing.T) {
	for name, doc := range map[string]string{
		"a shell script":     "#!/bin/bash\necho hi\n",
		"no kubeadm file":    "#cloud-config\nwrite_files:\n- path: /etc/motd\n  content: hi\n",
		"kubeadm of no kind": "#cloud-config\nwrite_files:\n- path: " + bootstrap.KubeadmPath + "\n  content: 'kind: Nothing'\n",
		"bad encoding":       "#cloud-config\nwrite_files:\n- path: /x\n  encoding: rot13\n  content: x\n",
	} {
		if _, err := bootstrap.ParseRegistration(doc); err == nil {
			t.Errorf("%s: parsed without an error", name)
		}
	}
}
