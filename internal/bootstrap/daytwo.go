package bootstrap

// Day two on the node (issue #34): the kubelet's settings that keep a node healthy for months
// (client certificate rotation, graceful shutdown), the control plane's certificate renewal, and
// every certificate's expiry as a metric for node-exporter's textfile collector.
//
// The kubelet settings reach a node two ways, because kubeadm reads a KubeletConfiguration only
// from the configuration of kubeadm init: init uploads it to the kubelet-config ConfigMap and every
// join downloads that ("kubeadm will apply the same base KubeletConfiguration to all nodes in the
// cluster", https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/control-plane-flags/#customizing-the-kubelet).
// A joining node also writes the same fields as a patch of the "kubeletconfiguration" target
// (JoinConfiguration patches.directory, kubeadm 1.25 and later:
// https://github.com/kubernetes/kubernetes/pull/110405), so a node holds them even in a cluster
// whose first node was built before they existed. Files and the join phase only: nothing in the
// install phases (bake.go) changes.

import (
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
)

// Paths and units of day two.
const (
	// TextfileDir is where node scripts write metrics for node-exporter's textfile collector
	// (internal/manifests mounts it from the host).
	TextfileDir = StateDir + "/textfile"
	// CertsScriptPath renews the control-plane certificates ("renew") and writes their expiry.
	CertsScriptPath = "/usr/local/sbin/gpucluster-certs.sh"
	// KubeletPatchPath is a joining node's patch of the kubelet configuration kubeadm downloads.
	KubeletPatchPath = "/etc/gpucluster/kubeadm-patches/kubeletconfiguration+merge.yaml"
	certExpiryUnit   = "gpucluster-cert-expiry"
	certRenewUnit    = "gpucluster-cert-renew"
	kubeletPatchDir  = "/etc/gpucluster/kubeadm-patches"
)

// Graceful node shutdown (https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/#graceful-node-shutdown):
// on a shutdown or reboot (an ECS StopInstances or RebootInstances is one to the guest) the
// kubelet delays it with a systemd inhibitor lock, terminates the regular pods within
// shutdownGracePeriod - shutdownGracePeriodCriticalPods and then the critical ones (system-node-
// and system-cluster-critical priority) within the rest. Without shutdownGracePeriod (default 0)
// the feature does nothing and pods die with the machine. The figures: a training job gets 4
// minutes from SIGTERM to write a checkpoint of its model and optimizer state to the shared
// storage tier before it is killed, which is the budget of a checkpoint of tens of GB at a few
// hundred MB/s (our estimate, not a vendor figure); the node's own agents (CNI, device plugin,
// node-exporter) get the last minute. A pod still gets no more than its own
// terminationGracePeriodSeconds, so the node waits only as long as its pods ask.
//
// ShutdownGracePeriod is exported for the node pool, which gives a node that long (and a margin)
// to stop before it deletes it anyway (internal/nodepool, issue #34).
const (
	ShutdownGracePeriod             = 5 * time.Minute
	shutdownGracePeriodCriticalPods = time.Minute
)

// kubeletConfiguration is the part of the kubelet's configuration
// (https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/) the provider sets.
//
// rotateCertificates: the kubelet requests a new client certificate from the API server as the
// current one nears its end, so a node outlives the one year of the certificate kubeadm join gave
// it (https://kubernetes.io/docs/tasks/tls/certificate-rotation/). kubeadm sets it by default too;
// written so that it does not rest on a default.
//
// serverTLSBootstrap is not set: it would have the kubelet request its serving certificate as a
// kubernetes.io/kubelet-serving CSR, which no built-in controller approves, so until someone (or
// an approver to deploy) approves each node's CSR, kubectl logs and exec on that node fail
// (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/#kubelet-serving-certs).
// The gain, a serving certificate signed by the cluster CA, matters to clients that verify the
// kubelet; the stack's do not (node-exporter and DCGM are scraped on their own ports).
type kubeletConfiguration struct {
	APIVersion                      string `json:"apiVersion"`
	Kind                            string `json:"kind"`
	RotateCertificates              bool   `json:"rotateCertificates"`
	ShutdownGracePeriod             string `json:"shutdownGracePeriod"`
	ShutdownGracePeriodCriticalPods string `json:"shutdownGracePeriodCriticalPods"`
}

func kubeletConfig() kubeletConfiguration {
	return kubeletConfiguration{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration", RotateCertificates: true,
		ShutdownGracePeriod: ShutdownGracePeriod.String(), ShutdownGracePeriodCriticalPods: shutdownGracePeriodCriticalPods.String()}
}

// kubeletPatches reports whether a joining node's kubeadm applies kubeletconfiguration patches.
func (o Options) kubeletPatches() bool { return o.joins() && o.Versions.k8sMinorNumber() >= 25 }

// certsScript writes alerting.MetricCertificateExpiry for every certificate of the kubeadm PKI and the
// kubelet's client certificate (openssl x509 -enddate), to a temporary name renamed into place so
// that node-exporter never reads half a file (https://github.com/prometheus/node_exporter#textfile-collector).
// With "renew" it first runs `kubeadm certs renew all` and restarts the control-plane containers:
// "After running the command you should restart the control plane Pods" since not every component
// reloads its certificates
// (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/#manual-certificate-renewal).
// crictl stop ends the containers and the kubelet starts them again (static pods restart Always;
// crictl reads its endpoint from CONTAINER_RUNTIME_ENDPOINT, https://github.com/kubernetes-sigs/cri-tools/blob/master/docs/crictl.md);
// crictl comes with kubeadm's package (Depends: cri-tools,
// https://github.com/kubernetes/release/blob/master/cmd/krel/templates/latest/kubeadm/debian/control).
// admin.conf is renewed too, so root's copy is refreshed. PKI, KUBELET_CERT and OUT move it
// elsewhere for tests.
const certsScript = `#!/bin/bash
set -uo pipefail
P=${PKI:-/etc/kubernetes/pki} K=${KUBELET_CERT:-/var/lib/kubelet/pki/kubelet-client-current.pem} D=${OUT:-` + TextfileDir + `}
if [ "${1:-}" = renew ]; then
  kubeadm certs renew all || exit 1
  export CONTAINER_RUNTIME_ENDPOINT=` + criSocket + `
  crictl ps -q --name '^(kube-apiserver|kube-controller-manager|kube-scheduler|etcd)$' | xargs -r crictl stop
  install -m 0600 /etc/kubernetes/admin.conf /root/.kube/config
fi
mkdir -p "$D"; M=` + alerting.MetricCertificateExpiry + `
{ echo "# TYPE $M gauge"
for f in "$P"/*.crt "$P"/etcd/*.crt "$K"; do
  e=$(openssl x509 -noout -enddate -in "$f" 2>/dev/null) && t=$(date -d "${e#notAfter=}" +%s) || continue
  n=${f#"$P"/}; n=${n%.crt}; [ "$f" = "$K" ] && n=kubelet-client
  echo "$M{certificate=\"${n//\//-}\"} $t"
done; } >"$D/certs.prom.$$" && mv -f "$D/certs.prom.$$" "$D/certs.prom"
`

// Units: the expiry every hour on every node (and at boot); the renewal monthly on control-plane
// nodes, Persistent so a node that was off catches up, each at a random hour of its first day
// so that the nodes of a control plane do not restart their API servers together
// (https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html).
func certUnits(controlPlane bool) []writeFile {
	unit := func(name, arg, timer string) []writeFile {
		return []writeFile{
			{Path: systemdDir + name + ".service", Content: "[Service]\nType=oneshot\nExecStart=" + CertsScriptPath + arg + "\n"},
			{Path: systemdDir + name + ".timer", Content: "[Timer]\n" + timer + "\n[Install]\nWantedBy=timers.target\n"},
		}
	}
	files := []writeFile{{Path: CertsScriptPath, Permissions: "0700", Content: certsScript}}
	files = append(files, unit(certExpiryUnit, "", "OnBootSec=2min\nOnUnitActiveSec=1h")...)
	if controlPlane {
		files = append(files, unit(certRenewUnit, " renew", "OnCalendar=monthly\nRandomizedDelaySec=1d\nPersistent=true")...)
	}
	return files
}

// dayTwoFiles are the node's day-two files: the certificate units and script, and a joining
// node's kubelet patch.
func dayTwoFiles(o Options) ([]writeFile, error) {
	files := certUnits(o.Role == RoleControlPlane)
	if o.kubeletPatches() {
		patch, err := marshalDocs([]any{kubeletConfig()})
		if err != nil {
			return nil, err
		}
		files = append(files, writeFile{Path: KubeletPatchPath, Permissions: "0600", Content: patch})
	}
	return files, nil
}

// certTimersLine starts the node's certificate timers, once it is in the cluster.
func (o Options) certTimersLine() string {
	timers := []string{certExpiryUnit + ".timer"}
	if o.Role == RoleControlPlane {
		timers = append(timers, certRenewUnit+".timer")
	}
	return "systemctl enable --now " + strings.Join(timers, " ")
}
