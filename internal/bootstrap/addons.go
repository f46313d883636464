package bootstrap

// What the first control-plane node keeps applying to the cluster: the CNI and the caller's
// add-ons, from files cloud-init writes, by a systemd unit that runs after every boot; and, for a
// highly available control plane, the timer that keeps the uploaded certificates alive.

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap/flannel"
)

// Paths and units of the add-ons.
const (
	AddonsDir        = "/etc/gpucluster/addons"
	CNIAddonFile     = "00-cni-flannel.yaml"
	AddonsScriptPath = "/usr/local/sbin/gpucluster-addons.sh"
	addonsService    = "gpucluster-addons.service"
	uploadCertsUnit  = "gpucluster-upload-certs"
	uploadCertsTimer = uploadCertsUnit + ".timer"
	systemdDir       = "/etc/systemd/system/"
	// KubeadmJoinPath is the control-plane join of a highly available first node (see script).
	KubeadmJoinPath = "/etc/gpucluster/kubeadm-join.yaml"
	// CACertPath and CAKeyPath are where kubeadm looks for an existing cluster CA.
	CACertPath = "/etc/kubernetes/pki/ca.crt"
	CAKeyPath  = "/etc/kubernetes/pki/ca.key"
)

// MaxUserDataBytes is the most user data ECS accepts: "The user data can be up to 32 KB in size"
// before Base64 encoding (RunInstances, UserData:
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances).
// Manifests are written gzip-compressed (cloud-init write_files encoding gz+b64) to stay under it.
const MaxUserDataBytes = 32 * 1024

// addonsScript applies every file of AddonsDir with server-side apply, which is idempotent: the
// unit runs it after each boot, so an add-on deleted by hand comes back and a changed one is
// updated. It waits for the API (the first boot runs it while kubeadm init finishes) and retries,
// which also orders CRDs before their custom resources.
const addonsScript = `#!/bin/bash
# Applies the cluster add-ons in ` + AddonsDir + `. Rendered by terraform-provider-gpucluster.
set -uo pipefail
export KUBECONFIG=/etc/kubernetes/admin.conf
for attempt in $(seq 1 60); do
  if [ -r "$KUBECONFIG" ] && kubectl get --raw /readyz >/dev/null 2>&1 &&
    kubectl apply --server-side --force-conflicts --field-manager=gpucluster-addons -f ` + AddonsDir + `/; then
    echo "gpucluster add-ons applied (attempt $attempt)"
    exit 0
  fi
  sleep 10
done
echo "gpucluster add-ons were not applied in 10 minutes; see journalctl -u ` + addonsService + `" >&2
exit 1
`

const addonsUnit = `[Unit]
Description=Apply the gpucluster add-ons (CNI, GPU device plugin, monitoring) to the cluster
Wants=network-online.target
After=network-online.target kubelet.service
ConditionPathExists=/etc/kubernetes/admin.conf

[Service]
Type=oneshot
ExecStart=` + AddonsScriptPath + `

[Install]
WantedBy=multi-user.target
`

// The certificates kubeadm init --upload-certs stores in the cluster expire after two hours; a
// control-plane node that joins later (a scale-up, a replacement) needs them, so they are
// uploaded again every hour with the same key. The key is read from the kubeadm configuration
// file (mode 0600), never from a command line. This is the unit without a control-plane size;
// with one, uploadcerts.go uploads them only while a control-plane join is pending.
const uploadCertsService = `[Unit]
Description=Upload the control-plane certificates again for joining control-plane nodes
After=kubelet.service
ConditionPathExists=/etc/kubernetes/admin.conf

[Service]
Type=oneshot
ExecStart=/usr/bin/kubeadm init phase upload-certs --upload-certs --config ` + KubeadmPath + `
`

const uploadCertsTimerUnit = `[Unit]
Description=Upload the control-plane certificates every hour (they expire after two)

[Timer]
OnBootSec=5min
OnUnitActiveSec=1h

[Install]
WantedBy=timers.target
`

// gzipBase64 is content for write_files with encoding gz+b64. No name or time in the gzip header,
// so the same content gives the same bytes (stable plans).
func gzipBase64(content string) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write([]byte(content))
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// gunzipBase64 reads what gzipBase64 wrote.
func gunzipBase64(content string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return "", err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(zr)
	return string(out), err
}

// firstNodeFiles are the files only the first control-plane node writes: the CA, the CNI and
// add-ons with the unit that applies them, and the certificate upload timer.
func firstNodeFiles(o Options) ([]writeFile, error) {
	var files []writeFile
	k := o.Kubernetes
	if k.CACertPEM != "" {
		// Before kubeadm init, which then uses this CA instead of making one: its hash is the
		// ca_cert_hash every join pins.
		files = append(files,
			writeFile{Path: CACertPath, Permissions: "0600", Owner: "root:root", Content: k.CACertPEM},
			writeFile{Path: CAKeyPath, Permissions: "0600", Owner: "root:root", Content: k.CAKeyPEM})
	}
	cni, err := flannel.RenderIn(o.podSubnet(), o.Kubernetes.ImageRegistry)
	if err != nil {
		return nil, err
	}
	files = append(files, writeFile{Path: AddonsDir + "/" + CNIAddonFile, Permissions: "0644", Owner: "root:root", Encoding: "gz+b64", Content: gzipBase64(cni)})
	for _, name := range slices.Sorted(maps.Keys(k.Addons)) {
		files = append(files, writeFile{Path: AddonsDir + "/" + name, Permissions: "0644", Owner: "root:root", Encoding: "gz+b64", Content: gzipBase64(k.Addons[name])})
	}
	files = append(files,
		writeFile{Path: AddonsScriptPath, Permissions: "0700", Owner: "root:root", Content: addonsScript},
		writeFile{Path: systemdDir + addonsService, Permissions: "0644", Owner: "root:root", Content: addonsUnit})
	if o.conditionalUpload() {
		files = append(files, conditionalUploadFiles(o)...)
	} else if o.highlyAvailable() {
		files = append(files,
			writeFile{Path: systemdDir + uploadCertsUnit + ".service", Permissions: "0644", Owner: "root:root", Content: uploadCertsService},
			writeFile{Path: systemdDir + uploadCertsTimer, Permissions: "0644", Owner: "root:root", Content: uploadCertsTimerUnit})
	}
	return files, nil
}

// reservedAddon reports whether an add-on name would overwrite the CNI.
func reservedAddon(name string) error {
	if name == CNIAddonFile {
		return fmt.Errorf("is the CNI's own file")
	}
	return nil
}
