package bootstrap

import (
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// VersionSkewPolicy is the Kubernetes project's statement of which versions may run together and
// how a cluster is upgraded: "kubeadm upgrade" takes a cluster from one minor to the next only
// (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/: "Skipping MINOR
// versions when upgrading is unsupported"), and a kubelet is never newer than the API server it
// talks to (https://kubernetes.io/releases/version-skew-policy/#kubelet).
const VersionSkewPolicy = "https://kubernetes.io/releases/version-skew-policy/"

// CheckKubernetesUpgrade refuses a change of the nodes' Kubernetes release that kubeadm cannot
// make: one that skips a minor, or goes back to an older one (kubeadm has no downgrade; the
// cluster's etcd data and API objects may already be in the newer minor's form). A change within
// one minor, or to the next, passes. from and to are the pool's versions before and after, with
// defaults filled the same way (a new provider default is a change too).
func CheckKubernetesUpgrade(from, to Versions) error {
	from, to = from.WithDefaults(), to.WithDefaults()
	if from.Kubernetes == to.Kubernetes {
		return nil
	}
	a, _ := parseVersion(from.Kubernetes, 2, 3)
	b, _ := parseVersion(to.Kubernetes, 2, 3)
	if len(a) < 2 || len(b) < 2 || a[0] != b[0] {
		return nil // not two 1.MINOR versions: Versions.Check names a malformed one
	}
	switch {
	case b[1] < a[1]:
		return upgradeError(to.Kubernetes,
			fmt.Sprintf("is older than the nodes' %s: kubeadm does not downgrade a cluster (%s)", from.Kubernetes, VersionSkewPolicy),
			fmt.Sprintf("keep %s, or build a new cluster on %s and move the workloads", from.Kubernetes, to.Kubernetes))
	case b[1] > a[1]+1:
		var steps []string
		for m := a[1] + 1; m <= b[1]; m++ {
			steps = append(steps, fmt.Sprintf("%d.%d", a[0], m))
		}
		return upgradeError(to.Kubernetes,
			fmt.Sprintf("skips %s from the nodes' %s: kubeadm upgrades one minor at a time and a kubelet may not be newer than its API server (%s)",
				strings.Join(steps[:len(steps)-1], ", "), from.Kubernetes, VersionSkewPolicy),
			"apply each minor in turn: "+strings.Join(steps, ", then "))
	}
	return nil
}

// MinorRises reports whether to's Kubernetes minor is above from's (1.36.3 -> 1.37.2); unreadable
// versions do not.
func MinorRises(from, to Versions) bool {
	a, _ := parseVersion(from.WithDefaults().Kubernetes, 2, 3)
	b, _ := parseVersion(to.WithDefaults().Kubernetes, 2, 3)
	return len(a) >= 2 && len(b) >= 2 && a[0] == b[0] && b[1] > a[1]
}

// upgradeError is a refusal of kubernetes = value, its message saying why and the fix.
func upgradeError(value, why, fix string) *planerr.Error {
	return planerr.New("kubernetes", value, why, fix, fmt.Errorf("kubernetes version %q %s; %s", value, why, fix))
}

// Raising the cluster's Kubernetes version before its control plane rolls onto a new minor.
// kubeadm join --control-plane writes the joining node's control-plane manifests from the
// cluster's ClusterConfiguration (the kubeadm-config ConfigMap), kubernetesVersion included, and
// its preflight refuses a kubelet newer than that version ("[ERROR KubeletVersion]: the kubelet
// version is higher than the control plane version", KubeletVersionCheck in
// cmd/kubeadm/app/preflight/checks.go, kubernetes v1.33, run for a control-plane join through
// RunInitNodeChecks). So a replacement control-plane node of the next minor cannot join until
// the cluster's recorded version is that minor. kubeadm's own path raises it: kubeadm upgrade
// apply on one control-plane node, with the new minor's kubeadm
// (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/, "Call
// kubeadm upgrade"): it checks the cluster's health, upgrades that node's control-plane static
// pods, kube-proxy and CoreDNS, and writes the new kubernetesVersion to kubeadm-config. The
// provider sends this script through Cloud Assistant to a running control-plane node before it
// replaces the first one; the replacements, with the new kubelet, then join the new version.

// KubeadmUpgradeScript is the script that brings the cluster's control plane to the release o's
// nodes install, run as root on a running control-plane node of the old minor. It switches the
// node's Kubernetes apt repository to the new minor (pkgs.k8s.io has one repository per minor:
// https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/change-package-repository/),
// installs that kubeadm and runs kubeadm upgrade apply. It exits 0 at once when kubeadm-config
// already holds the release (a roll of the same version, or an apply run again), so the provider
// can send it before every control-plane roll.
func KubeadmUpgradeScript(o Options) (string, error) {
	o.Versions = o.Versions.WithDefaults()
	if _, err := o.Versions.Check(); err != nil {
		return "", err
	}
	release := "v" + o.Versions.k8sRelease()
	return `#!/bin/sh
# gpucluster: raise the cluster's Kubernetes version (kubeadm upgrade apply) before new control-plane nodes join.
set -eu
export KUBECONFIG=/etc/kubernetes/admin.conf
target=` + release + `
current=$(kubectl -n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' | awk '$1 == "kubernetesVersion:" { print $2 }')
if [ "$current" = "$target" ]; then echo "cluster already at $target"; exit 0; fi
echo 'deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] ` + o.k8sRepo() + ` /' > /etc/apt/sources.list.d/kubernetes.list
apt-get update
apt-get install -y --allow-change-held-packages ` + pinAll("kubeadm", o.Versions.k8sPackageVersion()) + `
apt-mark hold kubeadm
kubeadm upgrade apply "$target" --yes
echo "cluster upgraded from $current to $target"
`, nil
}
