package bootstrap

import (
	"fmt"
	"slices"
	"strings"
)

// The NVIDIA driver and Fabric Manager come from Ubuntu's own archive (jammy restricted and
// multiverse, the -server driver branches Canonical builds from NVIDIA's data-centre releases),
// so they are on the in-VPC Ubuntu mirror, and Fabric Manager is installed at exactly the
// driver's version: NVIDIA's Fabric Manager user guide
// (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html) says the
// Fabric Manager and driver versions must match, and that without Fabric Manager the GPUs of an
// NVSwitch system (HGX A100 and H100 baseboards) cannot be used by CUDA, while nvidia-smi still
// lists them. NVIDIA's own .run installer (us.download.nvidia.com, about 300 MB) is not used: it
// is not in any mirror the VPC reaches. The packages are pinned to the Ubuntu revision of
// Versions.Driver that apt-cache lists; a driver the archive no longer carries fails the driver
// phase with the versions it does carry.

// driverBranch is the driver's major version, the Ubuntu package branch ("535").
func (v Versions) driverBranch() string { return strings.SplitN(v.Driver, ".", 2)[0] }

// script is the node's bootstrap script (phases.go): the phases of its role and options.
func script(o Options) string {
	return renderScript(o.Role, nodePhases(o))
}

// nodePhases are the phases of a node of o's role and options, in the order they run: the
// install phases (installPhases), then the node's own (mounts, join or init and add-ons).
func nodePhases(o Options) []phase {
	var phases []phase
	add := func(name string, lines ...string) { phases = append(phases, phase{name, lines}) }
	v := o.Versions
	worker := o.Role == RoleGPUWorker
	var mounts []Mount
	nfs := false
	for _, line := range o.Mounts {
		m, _ := ParseMount(line) // validated
		mounts = append(mounts, m)
		nfs = nfs || m.isNFS()
	}

	if lines := mirrorLines(o.packageMirror()); len(lines) > 0 {
		add(PhaseMirrors, lines...)
	}
	pkgs := []string{"ca-certificates", "curl", "gnupg", "containerd"}
	if nfs {
		pkgs = append(pkgs, "nfs-common")
	}
	add(PhasePackages,
		"apt-get update",
		"apt-get install -y --no-install-recommends "+strings.Join(pkgs, " "),
		"swapoff -a",
		`sed -ri '/\sswap\s/s/^([^#])/#\1/' /etc/fstab`,
		"printf 'overlay\\nbr_netfilter\\n' > /etc/modules-load.d/gpucluster-k8s.conf",
		"modprobe overlay",
		"modprobe br_netfilter",
		"printf 'net.bridge.bridge-nf-call-iptables = 1\\nnet.bridge.bridge-nf-call-ip6tables = 1\\nnet.ipv4.ip_forward = 1\\n' > /etc/sysctl.d/99-gpucluster-k8s.conf",
		"sysctl --system >/dev/null")
	if o.ERDMA {
		add(PhaseERDMA,
			"curl -fsSL -o /tmp/erdma_env_setup.sh "+erdmaSetupURL,
			"sh /tmp/erdma_env_setup.sh --egs")
	}
	if worker {
		br, drv := v.driverBranch(), v.Driver
		pkgs := fmt.Sprintf("nvidia-headless-%[1]s-server nvidia-utils-%[1]s-server", br)
		driver := []string{
			// nouveau would claim the GPUs first: blacklisted, out of the initramfs, unloaded; a
			// nouveau that cannot be unloaded costs one reboot, after which the phase runs again.
			"printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > /etc/modprobe.d/gpucluster-blacklist-nouveau.conf",
			"update-initramfs -u",
			`if lsmod | grep -q '^nouveau ' && ! modprobe -r nouveau; then`,
			`  if [ -e "$S/nouveau-reboot" ]; then echo 'nouveau still loaded after a reboot' >&2; exit 1; fi`,
			`  touch "$S/nouveau-reboot"; report 'reboot: nouveau is in use'; systemctl reboot; sleep 600`,
			"fi",
			"apt-get update",
			`apt-get install -y --no-install-recommends "linux-headers-$(uname -r)"`,
			fmt.Sprintf("v=$(apt_version nvidia-headless-%s-server %s)", br, drv),
			fmt.Sprintf(`if [ -z "$v" ]; then echo "driver %s is not in the apt sources; they have: $(apt-cache madison nvidia-headless-%s-server | awk '{print $3}' | tr '\n' ' ')" >&2; exit 1; fi`, drv, br),
			fmt.Sprintf("apt-get install -y --no-install-recommends %s", pinAll(pkgs, "$v")),
			"apt-mark hold " + pkgs,
			"modprobe nvidia",
			"nvidia-smi -pm 1",
			"nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv"}
		if !o.NVSwitch {
			// A machine with NVSwitches (PCI class 0680 "bridge" devices of NVIDIA, as the HGX A100
			// baseboard's switches show) whose type the catalog does not mark NVSwitch would get no
			// Fabric Manager and fail every CUDA job: the phase fails instead, saying so.
			driver = append(driver, `if lspci -d 10de::0680 2>/dev/null | grep -q .; then echo 'this machine has NVIDIA NVSwitches but its instance type is not marked NVSwitch: no Fabric Manager, CUDA would fail' >&2; exit 1; fi`)
		}
		add(PhaseDriver, driver...)
		if o.NVSwitch {
			fm := "nvidia-fabricmanager-" + br
			add(PhaseFabricManager,
				fmt.Sprintf("v=$(apt_version %s %s)", fm, drv),
				fmt.Sprintf(`if [ -z "$v" ]; then echo "Fabric Manager %s is not in the apt sources: it must match the driver exactly" >&2; exit 1; fi`, drv),
				fmt.Sprintf("apt-get install -y --no-install-recommends %s=$v", fm),
				"apt-mark hold "+fm,
				// kubelet (and with it the device plugin) starts only once Fabric Manager runs, at
				// every boot: without it CUDA fails on every GPU while the plugin advertises them.
				"mkdir -p /etc/systemd/system/kubelet.service.d",
				"printf '[Unit]\\nRequires=nvidia-fabricmanager.service\\nAfter=nvidia-fabricmanager.service\\n' > /etc/systemd/system/kubelet.service.d/10-gpucluster-fabricmanager.conf",
				"systemctl daemon-reload",
				"systemctl enable nvidia-fabricmanager",
				"systemctl restart nvidia-fabricmanager",
				"systemctl is-active nvidia-fabricmanager")
		}
	}
	rt := []string{"mkdir -p /etc/containerd",
		"containerd config default > /etc/containerd/config.toml",
		"sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml"}
	rt = append(rt, containerdImageLines(o.Kubernetes.ImageRegistry)...) // registry.go
	if worker {
		base := o.ctkBase()
		rt = append(rt,
			"curl -fsSL -o /tmp/nvidia-ctk.gpg "+base+"gpgkey",
			"gpg --batch --yes --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg /tmp/nvidia-ctk.gpg",
			"echo 'deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] "+base+"stable/deb/$(ARCH) /' > /etc/apt/sources.list.d/nvidia-container-toolkit.list",
			"apt-get update",
			"apt-get install -y --no-install-recommends nvidia-container-toolkit",
			"nvidia-ctk runtime configure --runtime=containerd --set-as-default")
	}
	add(PhaseContainerRuntime, append(rt, "systemctl enable containerd", "systemctl restart containerd")...)
	if worker && o.HostCUDA {
		add(PhaseHostCUDA,
			"curl -fsSL -o /tmp/cuda-keyring.deb "+cudaKeyringURL,
			"dpkg -i /tmp/cuda-keyring.deb",
			"apt-get update",
			fmt.Sprintf("apt-get install -y --no-install-recommends %s libnccl2=%s libnccl-dev=%s", v.cudaPackage(), v.ncclPackageVersion(), v.ncclPackageVersion()),
			"apt-mark hold libnccl2 libnccl-dev",
			fmt.Sprintf("printf 'export PATH=/usr/local/cuda-%s/bin:$PATH\\n' > /etc/profile.d/gpucluster-cuda.sh", v.CUDA))
	}
	repo := o.k8sRepo()
	add(PhaseKubelet,
		"mkdir -p /etc/apt/keyrings",
		"curl -fsSL -o /tmp/kubernetes-release.key "+repo+"Release.key",
		"gpg --batch --yes --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg /tmp/kubernetes-release.key",
		"echo 'deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] "+repo+" /' > /etc/apt/sources.list.d/kubernetes.list",
		"apt-get update",
		fmt.Sprintf("apt-get install -y %s", pinAll("kubelet kubeadm kubectl", v.k8sPackageVersion())),
		"apt-mark hold kubelet kubeadm kubectl",
		"systemctl enable kubelet")
	if len(mounts) > 0 {
		var lines []string
		for _, m := range mounts {
			lines = append(lines, fmt.Sprintf("mkdir -p '%s'", m.Path),
				fmt.Sprintf("grep -qxF '%[1]s' /etc/fstab || echo '%[1]s' >> /etc/fstab", m.Line()))
		}
		add(PhaseMounts, append(lines, "mount -a")...)
	}
	joinPhases(o, add)
	return phases
}

// installPhases are the phases that install software and change nothing node-specific: what an
// image builder runs (bake.go) and a node from that image skips (same digest).
var installPhases = []string{PhaseMirrors, PhasePackages, PhaseERDMA, PhaseDriver, PhaseFabricManager, PhaseContainerRuntime, PhaseHostCUDA, PhaseKubelet}

// pinAll is "a=V b=V" for the packages "a b".
func pinAll(pkgs, version string) string {
	f := strings.Fields(pkgs)
	for i := range f {
		f[i] += "=" + version
	}
	return strings.Join(f, " ")
}

// joinPhases are the last phases: the worker's or control-plane node's kubeadm join, or the first
// node's kubeadm init and add-ons. With an API server name (apiname.go) every phase first maps it
// to the load balancer, and a control-plane node maps it to itself once it serves the API: the
// first node before kubeadm init (which reaches its API through admin.conf), the others after
// kubeadm join.
func joinPhases(o Options, add func(string, ...string)) {
	ep := o.controlPlaneEndpoint()
	join := append(metadataGuardSetup(), o.apiHostsSetup()...) // metadataguard.go, apiname.go
	if o.joins() {
		// Nodes boot together, or before the first control-plane node (cluster-core creates it
		// after the GPU pools, whose sizes its add-ons need): the joining ones wait for the API,
		// up to 45 minutes, and a failed join (certificates not uploaded yet, the load balancer
		// not healthy yet) is reset and tried again.
		join = append(join,
			fmt.Sprintf(`wait_for_api() { local n=0; until curl -ksf --max-time 5 'https://%s/livez' >/dev/null; do n=$((n+1)); if [ "$n" -ge 270 ]; then echo "the API server at %s did not answer in 45 minutes" >&2; return 1; fi; sleep 10; done; }`, ep, ep),
			`join() { local n=0; until kubeadm join --config "$1"; do n=$((n+1)); if [ "$n" -ge 20 ]; then return 1; fi; kubeadm reset -f >/dev/null 2>&1 || true; sleep 30; done; }`,
		)
	}
	self := o.apiHostsCall(APIHostsModeSelf)
	admin := append(self, "mkdir -p /root/.kube", "install -m 0600 /etc/kubernetes/admin.conf /root/.kube/config")
	switch {
	case o.Role == RoleGPUWorker:
		if o.ProviderID {
			// kubeadm's kubelet unit reads KUBELET_EXTRA_ARGS from /etc/default/kubelet; the
			// Cluster Autoscaler maps nodes to scaling groups by the provider id.
			join = append(join,
				fmt.Sprintf(`md() { local t; t=$(curl -fsS --max-time 5 -X PUT -H 'X-aliyun-ecs-metadata-token-ttl-seconds: 60' %s/latest/api/token 2>/dev/null) || t=""; curl -fsS --max-time 5 ${t:+-H "X-aliyun-ecs-metadata-token: $t"} "%s/latest/meta-data/$1"; }`, metadataEndpoint, metadataEndpoint),
				`region=$(md region-id); instance=$(md instance-id)`,
				`echo "KUBELET_EXTRA_ARGS=--provider-id=${region}.${instance}" > /etc/default/kubelet`)
		}
		join = append(append(join, "wait_for_api"), o.storedTokenLines()...)
		join = append(join, "join "+KubeadmPath, o.certTimersLine())
		if o.SpotInterruptionHandler {
			join = append(join, "systemctl daemon-reload", "systemctl enable --now "+spotHandlerService)
		}
		add(PhaseJoin, join...)
	case !o.initNode():
		join = append(append(join, "wait_for_api"), o.storedTokenLines()...)
		join = append(append(append(join, "join "+KubeadmPath), admin...), o.certTimersLine())
		// The token, upload and snapshot timers' units are new to systemd: one daemon-reload for all.
		if timers := slices.Concat(o.joinTokenLines(), o.uploadCertsLines(), o.etcdSnapshotLines()); len(timers) > 0 {
			join = append(append(join, "systemctl daemon-reload"), timers...)
		}
		add(PhaseJoin, join...)
	default:
		add(PhaseInit, append(join, initLines(o, ep, self)...)...)
		addons := []string{"systemctl daemon-reload"}
		if o.highlyAvailable() {
			// kubeadm deletes the uploaded certificates after 2 hours: the timer uploads them again.
			addons = append(addons, "systemctl enable --now "+uploadCertsTimer)
		}
		addons = append(append(addons, o.joinTokenLines()...), o.etcdSnapshotLines()...)
		add(PhaseAddons, append(addons, o.certTimersLine(), "systemctl enable "+addonsService, "systemctl start --no-block "+addonsService)...)
	}
}

// initLines are the first node's kubeadm init, after the helpers of joinPhases: self maps the API
// server name to the node itself (none without a name).
func initLines(o Options, ep string, self []string) []string {
	var init []string
	if o.highlyAvailable() {
		// A first node that replaces a lost one finds the cluster answering at the load
		// balancer: it joins it instead of creating a second cluster behind the same address.
		init = append(init, fmt.Sprintf("if curl -ksf --max-time 10 'https://%s/livez' >/dev/null; then", ep))
		for _, l := range o.storedTokenLinesFor(KubeadmJoinPath) {
			init = append(init, "  "+l)
		}
		init = append(init, "  join "+KubeadmJoinPath,
			"else")
		for _, l := range self {
			init = append(init, "  "+l)
		}
		init = append(init, "  kubeadm init --config "+KubeadmPath+" --upload-certs", "fi")
	} else {
		init = append(append(init, self...), "kubeadm init --config "+KubeadmPath)
	}
	return append(init, append(self, "mkdir -p /root/.kube", "install -m 0600 /etc/kubernetes/admin.conf /root/.kube/config")...)
}
