package nodeagent

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

// A refusal's fix may name a host the region always reaches (the in-VPC mirror, in "use the
// in-VPC mirror" advice): that host is never the cause, so the failure stays at the phase of the
// host that is (here kubeadm's images: init), not at the phase fetching from the mirror. Seen in
// internal/clustertest, where every control plane with the public registries read "failed at
// mirrors".
func TestFailedPhaseIgnoresHostsTheRegionReaches(t *testing.T) {
	p := NodePlan{
		Phases: []scriptPhase{
			{name: bootstrap.PhaseMirrors, body: "printf 'deb http://" + bootstrap.AlibabaVPCMirrorHost + "/ubuntu/ jammy main' > /etc/apt/sources.list"},
			{name: bootstrap.PhaseKubelet, body: "curl -fsSL https://pkgs.k8s.io/core:/stable:/v1.33/deb/Release.key -o /k.key"},
			{name: bootstrap.PhaseInit, body: "kubeadm init --config /etc/gpucluster/kubeadm.yaml"},
		},
		Downloads: []Download{
			{Host: bootstrap.AlibabaVPCMirrorHost, What: "apt sources"},
			{Host: "pkgs.k8s.io", What: "https://pkgs.k8s.io/core:/stable:/v1.33/deb/Release.key"},
			{Host: "registry.k8s.io", What: "kubeadm images from registry.k8s.io", Image: true},
		},
		Attempts: 8,
	}
	const region = "cn-wulanchabu"
	imageReason := "pulling registry.k8s.io/kube-apiserver: registry.k8s.io is blocked from cn-wulanchabu. Fix: take packages from " +
		bootstrap.AlibabaVPCMirrorHost + " and images from a registry in the region"
	if got := failedPhase(p, RoleInit, imageReason, region); got != bootstrap.PhaseInit {
		t.Errorf("an image refusal whose fix names the in-VPC mirror failed at %q, want %q", got, bootstrap.PhaseInit)
	}
	pkgReason := "downloading the Kubernetes packages: pkgs.k8s.io is unreliable from cn-wulanchabu"
	if got := failedPhase(p, RoleInit, pkgReason, region); got != bootstrap.PhaseKubelet {
		t.Errorf("a pkgs.k8s.io refusal failed at %q, want %q", got, bootstrap.PhaseKubelet)
	}
	if got := bootstrap.ParseConsole(consoleOf(p, RoleInit, imageReason, region)); got.FailedPhase != bootstrap.PhaseInit || got.LastOK != bootstrap.PhaseKubelet {
		t.Errorf("console outcome %+v, want failed at %s after %s", got, bootstrap.PhaseInit, bootstrap.PhaseKubelet)
	}
}
