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
	"fmt"
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
// written so that it does not rest on a default. The new certificates last the
// controller-manager's --cluster-signing-duration, left at its default of a year
// (https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/):
// a shorter one only makes the kubelets ask more often, and CertificateExpiringSoon watches the
// kubelet-client certificate either way.
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

// CertRenewBefore is how long before its end the renewal timer renews a control-plane
// certificate: kubeadm's last a year ("Client certificates generated by kubeadm expire after 1
// year", https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/), so a node
// renews after about ten months, and then about once a year. Twice alerting.CertificateExpiryWarning:
// a renewal that fails is tried again every day for 30 days before the alert fires, and the
// alert still leaves 30 days to mend it. A renewal on need rather than on a calendar restarts
// the control-plane containers once a year instead of every month.
const CertRenewBefore = 2 * alerting.CertificateExpiryWarning

// certsScript writes alerting.MetricCertificateExpiry for every certificate of the kubeadm PKI,
// the client certificates kubeadm embeds in its kubeconfig files and the kubelet's client
// certificate (openssl x509 -enddate), to a temporary name renamed into place so that
// node-exporter never reads half a file (https://github.com/prometheus/node_exporter#textfile-collector).
//
// With "renew" it first renews when a certificate kubeadm renews has less than renew_before_days
// left: `kubeadm certs renew all`, which renews every certificate but the CAs' and the kubelet's
// ("kubeadm certs renew ... does not renew the CA certificates", and the kubelet rotates its own;
// https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/#manual-certificate-renewal),
// so those are not what makes it renew. The dates are read from the files with openssl, the same
// reading as the metric's, rather than from kubeadm certs check-expiration's table, which is
// written for people. After renewing it restarts the control-plane containers: "After running
// the command you should restart the control plane Pods" since not every component reloads its
// certificates (same page). crictl stop ends the containers and the kubelet starts them again
// (static pods restart Always; crictl reads its endpoint from CONTAINER_RUNTIME_ENDPOINT,
// https://github.com/kubernetes-sigs/cri-tools/blob/master/docs/crictl.md); crictl comes with
// kubeadm's package (Depends: cri-tools,
// https://github.com/kubernetes/release/blob/master/cmd/krel/templates/latest/kubeadm/debian/control).
// admin.conf is renewed too, so root's copy is refreshed. KUBE_DIR, KUBELET_CERT, OUT and
// ROOT_KUBECONFIG move it elsewhere for tests.
var certsScript = `#!/bin/bash
set -uo pipefail
C=${KUBE_DIR:-/etc/kubernetes} K=${KUBELET_CERT:-/var/lib/kubelet/pki/kubelet-client-current.pem} D=${OUT:-` + TextfileDir + `}
P=$C/pki M=` + alerting.MetricCertificateExpiry + `
renew_before_days=` + fmt.Sprint(int(CertRenewBefore.Hours()/24)) + `
end() { local e; e=$(openssl x509 -noout -enddate 2>/dev/null) && date -d "${e#notAfter=}" +%s; }
expiry() {
  local f n t
  for f in "$P"/*.crt "$P"/etcd/*.crt; do
    t=$(end 2>/dev/null <"$f") || continue
    n=${f#"$P"/}; n=${n%.crt}; echo "${n//\//-} $t"
  done
  for f in "$C"/admin.conf "$C"/super-admin.conf "$C"/controller-manager.conf "$C"/scheduler.conf; do
    t=$(sed -n 's/^ *client-certificate-data: *//p' "$f" 2>/dev/null | base64 -d 2>/dev/null | end) && echo "${f##*/} $t"
  done
  t=$(end 2>/dev/null <"$K") && echo "kubelet-client $t"
  return 0
}
due() {
  local limit=$(($(date +%s) + renew_before_days * 86400)) n t
  expiry | while read -r n t; do
    case $n in ca | front-proxy-ca | etcd-ca | kubelet-client) continue ;; esac
    if [ "$t" -lt "$limit" ]; then echo "$n"; fi
  done
}
if [ "${1:-}" = renew ] && [ -n "$(due)" ]; then
  echo "renewing: under $renew_before_days days left: $(due | tr "\n" " ")"
  kubeadm certs renew all || exit 1
  export CONTAINER_RUNTIME_ENDPOINT=` + criSocket + `
  crictl ps -q --name '^(kube-apiserver|kube-controller-manager|kube-scheduler|etcd)$' | xargs -r crictl stop
  install -m 0600 "$C"/admin.conf "${ROOT_KUBECONFIG:-/root/.kube/config}"
fi
mkdir -p "$D"
{ echo "# TYPE $M gauge"; expiry | while read -r n t; do echo "$M{certificate=\"$n\"} $t"; done; } >"$D/certs.prom.$$" &&
  mv -f "$D/certs.prom.$$" "$D/certs.prom"
`

// Units: the expiry every hour on every node (and at boot); the renewal on control-plane nodes
// every day, which renews only when a certificate nears its end (CertRenewBefore), Persistent
// so a node that was off catches up, at a random time of the day so that the nodes of a
// control plane, whose certificates were made within minutes of each other, do not restart
// their API servers together (https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html).
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
		files = append(files, unit(certRenewUnit, " renew", "OnCalendar=daily\nRandomizedDelaySec=1d\nPersistent=true")...)
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
