package bootstrap

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Download locations. The driver comes from NVIDIA's data-centre archive as a .run installer so
// that the exact version asked for is installed; CUDA and NCCL from NVIDIA's apt
// repository, pinned; the container toolkit from NVIDIA's libnvidia-container repository;
// Kubernetes from the community repository of the chosen minor (pkgs.k8s.io, 1.24 and newer);
// the eRDMA driver from Alibaba Cloud's in-VPC mirror.
const (
	driverURL       = "https://us.download.nvidia.com/tesla/%[1]s/NVIDIA-Linux-x86_64-%[1]s.run"
	cudaKeyringURL  = "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-keyring_1.1-1_all.deb"
	ctkKeyURL       = "https://nvidia.github.io/libnvidia-container/gpgkey"
	ctkRepo         = "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /"
	k8sRepoFmt      = "https://pkgs.k8s.io/core:/stable:/%s/deb/"
	erdmaSetupURL   = "http://mirrors.cloud.aliyuncs.com/erdma/env_setup.sh"
	criSocket       = "unix:///var/run/containerd/containerd.sock"
	controlPlaneKey = "node-role.kubernetes.io/control-plane"
)

// kubeadm configuration, written here rather than imported: k8s.io/kubernetes/cmd/kubeadm is not
// a library. v1beta4 from Kubernetes 1.31 (v1beta3 is deprecated there), v1beta3 before.
type kubeadmMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type kubeadmArg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type kubeadmTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type nodeRegistration struct {
	CRISocket        string         `json:"criSocket"`
	KubeletExtraArgs any            `json:"kubeletExtraArgs,omitempty"`
	Taints           []kubeadmTaint `json:"taints"`
}

type bootstrapToken struct {
	Token  string   `json:"token"`
	TTL    string   `json:"ttl"`
	Usages []string `json:"usages"`
	Groups []string `json:"groups"`
}

type initConfiguration struct {
	kubeadmMeta
	BootstrapTokens  []bootstrapToken `json:"bootstrapTokens"`
	NodeRegistration nodeRegistration `json:"nodeRegistration"`
	CertificateKey   string           `json:"certificateKey,omitempty"`
}

type clusterConfiguration struct {
	kubeadmMeta
	KubernetesVersion    string            `json:"kubernetesVersion,omitempty"`
	ControlPlaneEndpoint string            `json:"controlPlaneEndpoint,omitempty"`
	Networking           map[string]string `json:"networking,omitempty"`
	ImageRepository      string            `json:"imageRepository,omitempty"`
	Etcd                 etcdConfiguration `json:"etcd"`
}

// etcdConfiguration is stacked etcd: a member on every control-plane node, the data on its disk.
type etcdConfiguration struct {
	Local struct {
		DataDir string `json:"dataDir"`
	} `json:"local"`
}

type joinControlPlane struct {
	CertificateKey string `json:"certificateKey"`
}

type joinConfiguration struct {
	kubeadmMeta
	Discovery struct {
		BootstrapToken struct {
			APIServerEndpoint        string   `json:"apiServerEndpoint"`
			Token                    string   `json:"token"`
			CACertHashes             []string `json:"caCertHashes,omitempty"`
			UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification,omitempty"`
		} `json:"bootstrapToken"`
	} `json:"discovery"`
	NodeRegistration nodeRegistration  `json:"nodeRegistration"`
	ControlPlane     *joinControlPlane `json:"controlPlane,omitempty"`
}

func (o Options) kubeadmAPIVersion() string {
	if o.Versions.k8sMinorNumber() >= 31 {
		return "kubeadm.k8s.io/v1beta4"
	}
	return "kubeadm.k8s.io/v1beta3"
}

// nodeRegistration registers exactly Kubernetes.Labels and Kubernetes.Taints (a control-plane
// node keeps kubeadm's control-plane taint too).
func (o Options) nodeRegistration() nodeRegistration {
	labels := o.Kubernetes.Labels
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	reg := nodeRegistration{CRISocket: criSocket, Taints: []kubeadmTaint{}}
	if o.kubeadmAPIVersion() == "kubeadm.k8s.io/v1beta4" {
		reg.KubeletExtraArgs = []kubeadmArg{{Name: "node-labels", Value: strings.Join(pairs, ",")}}
	} else {
		reg.KubeletExtraArgs = map[string]string{"node-labels": strings.Join(pairs, ",")}
	}
	if o.Role == RoleControlPlane {
		// An explicit taint list replaces kubeadm's default, so the control-plane taint is kept here.
		reg.Taints = append(reg.Taints, kubeadmTaint{Key: controlPlaneKey, Effect: "NoSchedule"})
	}
	for _, t := range o.Kubernetes.Taints {
		reg.Taints = append(reg.Taints, kubeadmTaint(t))
	}
	return reg
}

// initConfig is the first control-plane node's InitConfiguration and ClusterConfiguration.
func (o Options) initConfig() []any {
	apiVersion := o.kubeadmAPIVersion()
	cc := clusterConfiguration{kubeadmMeta: kubeadmMeta{apiVersion, "ClusterConfiguration"}, ControlPlaneEndpoint: o.Kubernetes.APIEndpoint,
		Networking: map[string]string{"podSubnet": o.podSubnet()}, ImageRepository: o.Kubernetes.ImageRegistry}
	cc.Etcd.Local.DataDir = "/var/lib/etcd"
	if strings.Count(o.Versions.Kubernetes, ".") == 2 {
		cc.KubernetesVersion = "v" + o.Versions.Kubernetes
	} else {
		// The latest patch of the minor whose packages are installed: without a version kubeadm
		// would look up the latest stable release of any minor, newer than itself.
		cc.KubernetesVersion = "stable-" + strings.TrimPrefix(o.Versions.k8sMinor(), "v")
	}
	return []any{initConfiguration{
		kubeadmMeta: kubeadmMeta{apiVersion, "InitConfiguration"},
		// ttl 0s: the token never expires, so a node pool can grow months later. It lives in
		// Terraform state either way; rotate it by changing the module's token.
		BootstrapTokens: []bootstrapToken{{
			Token: o.Kubernetes.JoinToken, TTL: "0s",
			Usages: []string{"signing", "authentication"},
			Groups: []string{"system:bootstrappers:kubeadm:default-node-token"},
		}},
		NodeRegistration: o.nodeRegistration(),
		CertificateKey:   o.Kubernetes.CertificateKey,
	}, cc}
}

// joinConfig is the JoinConfiguration of a worker or, with the certificate key, of a
// control-plane node. Discovery pins the CA unless the caller opted out.
func (o Options) joinConfig(controlPlane bool) joinConfiguration {
	j := joinConfiguration{kubeadmMeta: kubeadmMeta{o.kubeadmAPIVersion(), "JoinConfiguration"}, NodeRegistration: o.nodeRegistration()}
	bt := &j.Discovery.BootstrapToken
	bt.APIServerEndpoint = o.Kubernetes.APIEndpoint
	bt.Token = o.Kubernetes.JoinToken
	if o.Kubernetes.CACertHash != "" {
		bt.CACertHashes = []string{o.Kubernetes.CACertHash}
	} else {
		bt.UnsafeSkipCAVerification = true // only with InsecureSkipCAVerification (Validate)
	}
	if controlPlane {
		j.ControlPlane = &joinControlPlane{CertificateKey: o.Kubernetes.CertificateKey}
	}
	return j
}

// kubeadmFiles are the kubeadm configuration files of the node, path -> YAML: KubeadmPath
// always; on the first node of a highly available control plane also KubeadmJoinPath, the
// control-plane join it uses when it replaces a lost first node.
func kubeadmFiles(o Options) (map[string]string, error) {
	var docs []any
	switch {
	case o.initNode():
		docs = o.initConfig()
	default:
		docs = []any{o.joinConfig(o.Role == RoleControlPlane)}
	}
	main, err := marshalDocs(docs)
	if err != nil {
		return nil, err
	}
	files := map[string]string{KubeadmPath: main}
	if o.highlyAvailable() {
		join, err := marshalDocs([]any{o.joinConfig(true)})
		if err != nil {
			return nil, err
		}
		files[KubeadmJoinPath] = join
	}
	return files, nil
}

func marshalDocs(docs []any) (string, error) {
	var parts []string
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return "", fmt.Errorf("encoding kubeadm configuration: %w", err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "---\n"), nil
}

// script is the bash program the document runs once. Every value it interpolates has been
// validated to a character set that needs no shell quoting beyond single quotes.
func script(o Options) string {
	v := o.Versions
	var mounts []Mount
	nfs := false
	for _, line := range o.Mounts {
		m, _ := ParseMount(line) // validated
		mounts = append(mounts, m)
		nfs = nfs || m.isNFS()
	}
	worker := o.Role == RoleGPUWorker
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	w("#!/bin/bash")
	w("# gpucluster node bootstrap, role %s. Rendered by terraform-provider-gpucluster; runs once.", o.Role)
	w("set -euo pipefail")
	w("export DEBIAN_FRONTEND=noninteractive")
	w("DONE=/var/lib/gpucluster/bootstrap.done")
	w(`if [ -e "$DONE" ]; then echo "gpucluster bootstrap already done"; exit 0; fi`)
	w(". /etc/os-release")
	w(`if [ "${ID:-}" != ubuntu ] || [ "${VERSION_ID:-}" != 22.04 ]; then`)
	w(`  echo "gpucluster bootstrap supports Ubuntu 22.04 (image ubuntu_22_04_x64_*); this is ${PRETTY_NAME:-unknown}" >&2; exit 1`)
	w("fi")
	w(`step() { echo "== $(date -u +%%FT%%TZ) $*"; }`)
	w(`retry() { local n=0; until "$@"; do n=$((n+1)); if [ "$n" -ge 5 ]; then return 1; fi; sleep $((n*10)); done; }`)
	w("")
	pkgs := []string{"ca-certificates", "curl", "gnupg", "containerd"}
	if nfs {
		pkgs = append(pkgs, "nfs-common")
	}
	if worker {
		pkgs = append(pkgs, "build-essential", "dkms", `"linux-headers-$(uname -r)"`)
	}
	for _, line := range mirrorLines(o.PackageMirror) {
		w("%s", line)
	}
	w("step 'base packages'")
	w("retry apt-get update")
	w("retry apt-get install -y --no-install-recommends %s", strings.Join(pkgs, " "))
	w("")
	w("step 'kernel settings for Kubernetes'")
	w("swapoff -a")
	w(`sed -ri '/\sswap\s/s/^([^#])/#\1/' /etc/fstab`)
	w("printf 'overlay\\nbr_netfilter\\n' > /etc/modules-load.d/gpucluster-k8s.conf")
	w("modprobe overlay")
	w("modprobe br_netfilter")
	w("printf 'net.bridge.bridge-nf-call-iptables = 1\\nnet.bridge.bridge-nf-call-ip6tables = 1\\nnet.ipv4.ip_forward = 1\\n' > /etc/sysctl.d/99-gpucluster-k8s.conf")
	w("sysctl --system >/dev/null")
	if o.ERDMA {
		w("")
		w("step 'eRDMA driver (Alibaba Cloud env_setup.sh, GPU variant)'")
		w("retry curl -fsSL -o /tmp/erdma_env_setup.sh %s", erdmaSetupURL)
		w("sh /tmp/erdma_env_setup.sh --egs")
	}
	if worker {
		w("")
		w("step 'NVIDIA driver %s'", v.Driver)
		w("printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > /etc/modprobe.d/gpucluster-blacklist-nouveau.conf")
		w("modprobe -r nouveau 2>/dev/null || true")
		w("if ! nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | grep -qx '%s'; then", v.Driver)
		w("  retry curl -fsSL -o /tmp/nvidia-driver.run "+driverURL, v.Driver)
		w("  sh /tmp/nvidia-driver.run --silent --dkms")
		w("fi")
		w("nvidia-smi -pm 1")
		w("")
		w("step 'CUDA %s and NCCL %s'", v.CUDA, v.NCCL)
		w("retry curl -fsSL -o /tmp/cuda-keyring.deb %s", cudaKeyringURL)
		w("dpkg -i /tmp/cuda-keyring.deb")
		w("retry apt-get update")
		w("retry apt-get install -y --no-install-recommends %s libnccl2=%s libnccl-dev=%s", v.cudaPackage(), v.ncclPackageVersion(), v.ncclPackageVersion())
		w("apt-mark hold libnccl2 libnccl-dev")
		w("printf 'export PATH=/usr/local/cuda-%s/bin:$PATH\\n' > /etc/profile.d/gpucluster-cuda.sh", v.CUDA)
		w("")
		w("step 'NVIDIA container toolkit'")
		w("retry curl -fsSL -o /tmp/nvidia-ctk.gpg %s", ctkKeyURL)
		w("gpg --batch --yes --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg /tmp/nvidia-ctk.gpg")
		w("echo 'deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] %s' > /etc/apt/sources.list.d/nvidia-container-toolkit.list", ctkRepo)
		w("retry apt-get update")
		w("retry apt-get install -y --no-install-recommends nvidia-container-toolkit")
	}
	w("")
	w("step 'containerd'")
	w("mkdir -p /etc/containerd")
	w("containerd config default > /etc/containerd/config.toml")
	w("sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml")
	for _, line := range containerdImageLines(o.Kubernetes.ImageRegistry) { // registry.go
		w("%s", line)
	}
	if worker {
		w("nvidia-ctk runtime configure --runtime=containerd --set-as-default")
	}
	w("systemctl enable containerd")
	w("systemctl restart containerd")
	w("")
	repo := fmt.Sprintf(k8sRepoFmt, v.k8sMinor())
	w("step 'Kubernetes %s packages'", v.Kubernetes)
	w("mkdir -p /etc/apt/keyrings")
	w("retry curl -fsSL -o /tmp/kubernetes-release.key %sRelease.key", repo)
	w("gpg --batch --yes --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg /tmp/kubernetes-release.key")
	w("echo 'deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] %s /' > /etc/apt/sources.list.d/kubernetes.list", repo)
	w("retry apt-get update")
	if pin := v.k8sPackageVersion(); pin != "" {
		w("retry apt-get install -y kubelet=%[1]s kubeadm=%[1]s kubectl=%[1]s", pin)
	} else {
		w("retry apt-get install -y kubelet kubeadm kubectl")
	}
	w("apt-mark hold kubelet kubeadm kubectl")
	w("systemctl enable kubelet")
	if len(mounts) > 0 {
		w("")
		w("step 'storage mounts'")
		for _, m := range mounts {
			w("mkdir -p '%s'", m.Path)
			w("grep -qxF '%[1]s' /etc/fstab || echo '%[1]s' >> /etc/fstab", m.Line())
		}
		w("retry mount -a")
	}
	w("")
	ep := o.Kubernetes.APIEndpoint
	if o.joins() {
		// Nodes boot together, or before the first control-plane node (cluster-core creates it
		// after the GPU pools, whose sizes its add-ons need): the joining ones wait for the API,
		// up to 45 minutes, and a failed join (certificates not uploaded yet, the load balancer
		// not healthy yet) is reset and tried again.
		w(`wait_for_api() { local n=0; until curl -ksf --max-time 5 'https://%s/livez' >/dev/null; do n=$((n+1)); if [ "$n" -ge 270 ]; then echo "the API server at %s did not answer in 45 minutes" >&2; return 1; fi; sleep 10; done; }`, ep, ep)
		w(`join() { local n=0; until kubeadm join --config "$1"; do n=$((n+1)); if [ "$n" -ge 20 ]; then return 1; fi; kubeadm reset -f >/dev/null 2>&1 || true; sleep 30; done; }`)
	}
	switch {
	case worker:
		w("step 'GPU check'")
		w("nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv")
		w("")
		if o.ProviderID {
			// kubeadm's kubelet unit reads KUBELET_EXTRA_ARGS from /etc/default/kubelet.
			w("step 'kubelet provider id <region>.<instance id> (the Cluster Autoscaler maps nodes to scaling groups by it)'")
			w(`md() { local t; t=$(curl -fsS --max-time 5 -X PUT -H 'X-aliyun-ecs-metadata-token-ttl-seconds: 60' %s/latest/api/token 2>/dev/null) || t=""; curl -fsS --max-time 5 ${t:+-H "X-aliyun-ecs-metadata-token: $t"} "%s/latest/meta-data/$1"; }`, metadataEndpoint, metadataEndpoint)
			w(`region=$(retry md region-id); instance=$(retry md instance-id)`)
			w(`echo "KUBELET_EXTRA_ARGS=--provider-id=${region}.${instance}" > /etc/default/kubelet`)
		}
		w("step 'kubeadm join %s'", ep)
		w("wait_for_api")
		w("join %s", KubeadmPath)
		if o.SpotInterruptionHandler {
			w("step 'spot-interruption handler (%s)'", spotHandlerService)
			w("systemctl daemon-reload")
			w("systemctl enable --now %s", spotHandlerService)
		}
	case !o.initNode():
		w("step 'kubeadm join --control-plane %s (stacked etcd)'", ep)
		w("wait_for_api")
		w("join %s", KubeadmPath)
		w("mkdir -p /root/.kube")
		w("install -m 0600 /etc/kubernetes/admin.conf /root/.kube/config")
	default:
		if o.highlyAvailable() {
			// A first node that replaces a lost one finds the cluster answering at the load
			// balancer: it joins it instead of creating a second cluster behind the same address.
			w("if curl -ksf --max-time 10 'https://%s/livez' >/dev/null; then", ep)
			w("  step 'the API at %s already answers: this node replaces the first control-plane node and joins the control plane'", ep)
			w("  join %s", KubeadmJoinPath)
			w("else")
			w("  step 'kubeadm init --upload-certs (controlPlaneEndpoint %s, stacked etcd)'", ep)
			w("  kubeadm init --config %s --upload-certs", KubeadmPath)
			w("fi")
		} else {
			w("step 'kubeadm init'")
			w("kubeadm init --config %s", KubeadmPath)
		}
		w("mkdir -p /root/.kube")
		w("install -m 0600 /etc/kubernetes/admin.conf /root/.kube/config")
		w("systemctl daemon-reload")
		if o.highlyAvailable() {
			w("step 'timer that uploads the control-plane certificates again every hour (kubeadm deletes them after 2 hours)'")
			w("systemctl enable --now %s", uploadCertsTimer)
		}
		w("step 'add-ons (CNI %s and the cluster add-ons) applied by %s'", "flannel", addonsService)
		w("systemctl enable %s", addonsService)
		w("systemctl start --no-block %s", addonsService)
	}
	w("mkdir -p /var/lib/gpucluster")
	w(`touch "$DONE"`)
	w("step 'done'")
	return b.String()
}
