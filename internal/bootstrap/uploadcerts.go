package bootstrap

// The control-plane certificates are in the cluster only while a control-plane join is pending
// (issue #31). kubeadm init --upload-certs stores them, encrypted with the certificate key, in the
// kube-system Secret kubeadm-certs, which kubeadm deletes with its key after two hours ("The
// kubeadm-certs Secret and decryption key expire after two hours",
// https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-init/#uploading-control-plane-certificates-to-the-cluster);
// `kubeadm init phase upload-certs --upload-certs`, run on a control-plane node that is already
// in the cluster, uploads them again (same page, and
// https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/).
//
// The trigger: with ControlPlaneSize, every control-plane node of a highly available control
// plane runs a timer whose script counts the Ready control-plane Nodes (label
// node-role.kubernetes.io/control-plane, kubectl with admin.conf) and uploads the certificates
// only while they are fewer than ControlPlaneSize (a node is missing: a join is pending), and
// otherwise deletes the kubeadm-certs Secret, so the download is closed while the control plane is
// full. Every control-plane node runs it, so a replacement for any one of them, the first
// included, finds the certificates within one period of the loss. The key is the configured
// certificate key, which the joining nodes hold in their configuration: it is read from the
// node's kubeadm configuration (mode 0600) into a temporary configuration file, never onto a
// command line. Without ControlPlaneSize the first node keeps uploading every hour for good
// (addons.go), as before.

import (
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

const (
	// UploadCertsScriptPath uploads the certificates while a control-plane join is pending.
	UploadCertsScriptPath = "/usr/local/sbin/gpucluster-upload-certs.sh"
	uploadCertsConfig     = "/run/gpucluster-upload-certs.yaml"
)

// conditionalUpload reports whether the node runs the conditional upload timer.
func (o Options) conditionalUpload() bool {
	k := o.Kubernetes
	return o.Role == RoleControlPlane && k.ControlPlaneSize > 0 && k.CertificateKey != "" && (k.JoinControlPlane || o.highlyAvailable())
}

// validateControlPlaneSize checks kubernetes.control_plane_size: etcd needs an odd number of
// members for a quorum that survives a loss (https://etcd.io/docs/v3.5/faq/#why-an-odd-number-of-cluster-members).
func validateControlPlaneSize(o Options) error {
	n := o.Kubernetes.ControlPlaneSize
	switch {
	case n == 0:
		return nil
	case n != 1 && n != 3 && n != 5 && n != 7:
		return planerr.Input("kubernetes.control_plane_size", fmt.Sprint(n), "is not 1, 3, 5 or 7 (etcd needs an odd number of members)",
			"set it to the control plane's node count, the same on every control-plane pool")
	case o.Role != RoleControlPlane:
		return planerr.Input("kubernetes.control_plane_size", fmt.Sprint(n), "is only for control-plane nodes",
			"remove control_plane_size from this "+o.Role+" pool")
	}
	return nil
}

// uploadCertsScript is the timer's script: the certificate key from the node's kubeadm
// configuration (InitConfiguration's certificateKey, or JoinConfiguration's
// controlPlane.certificateKey) into a 0600 InitConfiguration for kubeadm.
func (o Options) uploadCertsScript() string {
	lines := []string{
		"#!/bin/bash",
		"# Uploads the control-plane certificates while a control-plane join is pending. Rendered by terraform-provider-gpucluster.",
		"set -euo pipefail",
		"export KUBECONFIG=/etc/kubernetes/admin.conf",
		fmt.Sprintf("control_plane_size=%d", o.Kubernetes.ControlPlaneSize),
		`ready=$(kubectl get nodes -l node-role.kubernetes.io/control-plane -o jsonpath='{range .items[*]}{range .status.conditions[?(@.type=="Ready")]}{.status}{"\n"}{end}{end}' | grep -c '^True$' || true)`,
		`if (( ready < control_plane_size )); then`,
		"  umask 077",
		fmt.Sprintf(`  key=$(sed -n 's/^ *certificateKey: *"\{0,1\}\([0-9a-f]\{64\}\)"\{0,1\}$/\1/p' %s | head -n1)`, KubeadmPath),
		// Without a key, kubeadm would make a new one the joining nodes do not hold: stop, loudly.
		`  if [[ -z "$key" ]]; then`,
		fmt.Sprintf(`    echo "gpucluster-upload-certs: no certificateKey in %s; not uploading" >&2`, KubeadmPath),
		"    exit 1",
		"  fi",
		fmt.Sprintf("  printf 'apiVersion: kubeadm.k8s.io/v1beta4\\nkind: InitConfiguration\\ncertificateKey: %%s\\n' \"$key\" >%s", uploadCertsConfig),
		fmt.Sprintf("  trap 'rm -f %s' EXIT", uploadCertsConfig),
		fmt.Sprintf("  kubeadm init phase upload-certs --upload-certs --config %s", uploadCertsConfig),
		"else",
		"  kubectl -n kube-system delete secret kubeadm-certs --ignore-not-found",
		"fi",
	}
	return strings.Join(lines, "\n") + "\n"
}

// conditionalUploadFiles are the script, its service and its timer.
func conditionalUploadFiles(o Options) []writeFile {
	if !o.conditionalUpload() {
		return nil
	}
	return []writeFile{
		{Path: UploadCertsScriptPath, Permissions: "0700", Owner: "root:root", Content: o.uploadCertsScript()},
		{Path: systemdDir + uploadCertsUnit + ".service", Permissions: "0644", Owner: "root:root",
			Content: "[Unit]\nDescription=Upload the control-plane certificates while a control-plane join is pending\nAfter=kubelet.service\n" +
				"ConditionPathExists=/etc/kubernetes/admin.conf\n\n[Service]\nType=oneshot\nExecStart=" + UploadCertsScriptPath + "\n"},
		{Path: systemdDir + uploadCertsTimer, Permissions: "0644", Owner: "root:root", Content: uploadCertsTimerUnit},
	}
}

// uploadCertsLines start the timer on a joining control-plane node, after the phase's systemctl
// daemon-reload (the first node starts it in its add-ons phase).
func (o Options) uploadCertsLines() []string {
	if !o.conditionalUpload() || o.initNode() {
		return nil
	}
	return []string{"systemctl enable --now " + uploadCertsTimer}
}
