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

// upgradeError is a refusal of kubernetes = value, its message saying why and the fix.
func upgradeError(value, why, fix string) *planerr.Error {
	return planerr.New("kubernetes", value, why, fix, fmt.Errorf("kubernetes version %q %s; %s", value, why, fix))
}
