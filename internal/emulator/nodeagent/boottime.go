package nodeagent

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// The model of how long a node takes from RunInstances to Ready (issue #30): the instance's boot to
// cloud-init, then every phase the node still runs (its image holds the others: image.go), then
// what kubelet waits for before it posts Ready. A phase costs what it downloads at the node's
// bandwidth plus the work that is not download (apt's index refresh, dpkg, the driver's DKMS build,
// kubeadm). It is arithmetic on the figures below, not a clock: the emulator's instances boot in
// its configured boot time, and nothing waits for the model.
//
// Each figure says where it comes from. Where no vendor or upstream publishes one, it is an
// estimate, says so, and says what it rests on; the package sizes are the archive's own pages.

// Boot and kubeadm.
const (
	// bootSeconds is RunInstances to cloud-init running the user data. Estimate: ECS documents no
	// figure for it (RunInstances only says the instance is started once DescribeInstanceStatus
	// answers Running: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances).
	// It rests on the guest's part seen on a comparable cloud, an EC2 console whose cloud-init runs
	// its config stage about 34 s after the kernel starts
	// (https://github.com/aws/karpenter-provider-aws/issues/3102), plus the time to reach Running.
	// Bare-metal types (ebm*) take longer to POST; the model does not tell them apart.
	bootSeconds = 45.0
	// kubeadmJoinSeconds is kubeadm join on a worker: discovery, TLS bootstrap, kubelet start and
	// registration. Estimate: kubeadm documents only its timeouts (JoinConfiguration's
	// timeouts.tlsBootstrap, 5 minutes by default: https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/).
	kubeadmJoinSeconds = 15.0
	// kubeadmInitSeconds is kubeadm init once its images are pulled: certificates, the static
	// pods up and healthy, the add-ons kubeadm applies. Estimate, likewise bounded only by kubeadm's
	// documented wait (timeouts.controlPlaneComponentHealthCheck, 4 minutes by default, same page).
	kubeadmInitSeconds = 60.0
	// readyTailSeconds is from the pod network's images being there to Ready: the CNI DaemonSet's
	// containers start and write the CNI configuration, and kubelet posts Ready at its next status
	// update, which comes at most nodeStatusUpdateFrequency (default 10 s) later
	// (https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/). The 10 s bound
	// is taken whole.
	readyTailSeconds = 10.0
)

// Work that is not download.
const (
	// aptUpdateSeconds is one apt-get update. Estimate resting on the package-index refresh a
	// node image maintainer measured for yum: "the check takes 5-8 seconds because it hydrates
	// the yum cache" (https://github.com/awslabs/amazon-eks-ami/issues/1099).
	aptUpdateSeconds = 6.0
	// dpkgSecondsPerMB is dpkg's unpacking and configuring, per MB downloaded. Estimate: the
	// packages here unpack to 3 to 4 times their size (the archive pages below list both), written
	// to an ESSD system disk; 0.1 s per downloaded MB is 30 to 40 MB/s of installed files.
	dpkgSecondsPerMB = 0.1
	// dkmsBuildSeconds is building the NVIDIA kernel module for the running kernel (DKMS), on
	// Ubuntu 22.04: AKS's node image maintainers measure "~80–150s in-CSE NVIDIA DKMS
	// kernel-module compile" and bake it into the image to take it off provisioning
	// (https://github.com/Azure/AgentBaker/pull/8661). The middle of that range.
	dkmsBuildSeconds = 115.0
	// initramfsSeconds is update-initramfs -u (the driver phase's nouveau blacklist): "~10-30s
	// on GPU node boot" (https://github.com/Azure/AgentBaker/pull/8614). The middle.
	initramfsSeconds = 20.0
	// erdmaInstallSeconds is the eRDMA installer's work. Estimate: Alibaba Cloud says only that
	// "driver installation may take some time" (https://help.aliyun.com/en/ecs/user-guide/erdma-usage/);
	// the installer builds the eRDMA kernel module for the running kernel and installs rdma-core,
	// a module far smaller than NVIDIA's (whose build is dkmsBuildSeconds): half of it.
	erdmaInstallSeconds = 60.0
	// serviceStartSeconds is a daemon's start the phase waits for (containerd's restart, Fabric
	// Manager's NVSwitch set-up, nvidia-smi's persistence mode). Estimate.
	serviceStartSeconds = 5.0
	// scriptStepSeconds is a phase that only writes files (apt sources, fstab). Estimate.
	scriptStepSeconds = 1.0
)

// What the phases download, MB. Package sizes are amd64 "Package Size" from packages.ubuntu.com.
const (
	// libnvidia-compute-535 (535.309.01): 39,338.8 kB, https://packages.ubuntu.com/noble-updates/amd64/libnvidia-compute-535
	nvidiaComputeMB = 39.3
	// nvidia-kernel-source-535 (535.288.01): 44,140.1 kB, https://packages.ubuntu.com/noble-updates/nvidia-kernel-source-535
	nvidiaKernelSourceMB = 44.1
	// nvidia-firmware-560-560.35.03 (the GSP firmware): 45,114.9 kB, https://packages.ubuntu.com/plucky/nvidia-firmware-560-560.35.03;
	// taken for the 535 branch's firmware package, whose size was not at hand (same GSP firmware, one branch older).
	nvidiaFirmwareMB = 45.1
	// driverRestMB is the driver phase's other packages: nvidia-utils, nvidia-compute-utils,
	// nvidia-kernel-common and nvidia-dkms of the branch, dkms, linux-headers of the running
	// kernel and the compiler DKMS builds with (gcc, make, libc6-dev). Estimate.
	driverRestMB = 80.0
	// fabric-manager-535 (535.309.01, jammy): its amd64 binaries' tarball 1,776.6 kB,
	// https://packages.ubuntu.com/source/jammy/fabric-manager-535 (the noble-updates .deb of
	// nvidia-fabricmanager-535: 1,805.2 kB, https://packages.ubuntu.com/noble-updates/nvidia-fabricmanager-535)
	fabricManagerMB = 1.8
	// containerd (2.2.1, jammy-updates): 27,597.9 kB, https://packages.ubuntu.com/jammy-updates/containerd
	containerdMB = 27.6
	// basePackagesMB is the packages phase's rest: runc, ca-certificates, curl, gnupg and, for
	// NAS or CPFS mounts, nfs-common. Estimate.
	basePackagesMB = 12.0
	// containerToolkitMB is nvidia-container-toolkit with its libnvidia-container packages. Estimate.
	containerToolkitMB = 6.0
	// kubePackagesMB is kubelet, kubeadm, kubectl and what they pull in (kubernetes-cni,
	// cri-tools) from pkgs.k8s.io, which publishes no sizes page. Estimate: the size of those Go
	// binaries, compressed.
	kubePackagesMB = 90.0
	// erdmaMB is the eRDMA installer with its packages. Estimate.
	erdmaMB = 10.0
	// hostCUDAMB is cuda-toolkit-<CUDA> with libnccl2 and libnccl-dev from NVIDIA's repository
	// (HostCUDA: "gigabytes", bootstrap.Options). Estimate: 3 GB.
	hostCUDAMB = 3000.0
	// controlPlaneImagesMB is kubeadm's control-plane images (kube-apiserver,
	// kube-controller-manager, kube-scheduler, kube-proxy, etcd, coredns, pause), compressed.
	// Estimate.
	controlPlaneImagesMB = 200.0
	// imageUnpackSecondsPerMB is containerd's unpacking of a pulled image. Estimate, as dpkg's.
	imageUnpackSecondsPerMB = dpkgSecondsPerMB
)

// imageMB are the compressed sizes of the images a node pulls on its way to Ready, by repository
// name. Estimates; otherImageMB for any other.
var imageMB = map[string]float64{"pause": 0.3, "kube-proxy": 30, "flannel": 35, "flannel-cni-plugin": 5}

const otherImageMB = 50.0

// Bandwidth.
const (
	// sourceGbps caps what one node fetches from one source (apt over a few HTTP connections, a
	// registry): Alibaba Cloud states no bandwidth for the in-VPC mirror or a Container Registry
	// VPC endpoint. Estimate: 1 Gbit/s.
	sourceGbps = 1.0
	// unstatedGbps is the bandwidth of a type whose baseline the vendor does not state (the
	// catalog's NetworkGbps is 0): taken as sourceGbps, so the cap decides alone.
	unstatedGbps = sourceGbps
)

// BootStep is one step of a node's way to Ready in the model: the instance's boot, one phase of
// its script, or the wait for Ready after the script.
type BootStep struct {
	Phase   string  `json:"phase"`
	Seconds float64 `json:"seconds"`
	// Held: the node's image holds the phase, which the script skips (image.go).
	Held bool `json:"held,omitempty"`
	// DominatedBy is the largest part of the step's time.
	DominatedBy string `json:"dominated_by,omitempty"`
}

// Step names besides the script's phases.
const (
	StepBoot  = "boot"
	StepReady = "ready"
)

// bootModel is a node's modeled way to Ready: the steps, the time its kubelet registers (after
// the last phase) and the time it is Ready.
type bootModel struct {
	steps              []BootStep
	registered, ready  float64
	imageID            string
	bandwidthMBps      float64
	controlPlane, init bool
	// controlPlaneImagesHeld: the node's image holds kubeadm's control-plane images.
	controlPlaneImagesHeld bool
}

// part is one contribution to a step.
type part struct {
	what    string
	seconds float64
}

// modelBoot models the node of instance in with plan p joining as role into a cluster whose
// images come from ci.
func modelBoot(in *emulator.InstanceView, p NodePlan, role string, ci clusterImages) bootModel {
	m := bootModel{bandwidthMBps: bandwidthMBps(in.Type), controlPlane: role != RoleWorker, init: role == RoleInit, imageID: p.Image.imageID}
	// kubeadm's preflight pulls only the control-plane images the node does not have.
	m.controlPlaneImagesHeld = m.controlPlane && p.Image.pulledRef(ci.controlPlaneImage())
	m.add(StepBoot, part{"the instance's boot to cloud-init (estimate)", bootSeconds})
	for _, ph := range p.Phases {
		if ph.held {
			m.steps = append(m.steps, BootStep{Phase: ph.name, Held: true, DominatedBy: "held by image " + p.Image.imageID})
			continue
		}
		m.add(ph.name, m.phaseParts(ph)...)
	}
	m.registered = m.total()
	var parts []part
	for _, pull := range nodePulls(p, m.controlPlane, ci) {
		if !pull.controlPlane { // kubeadm's: counted in its init or join phase
			parts = append(parts, m.pull(pull.ref, imageSize(pull.ref)))
		}
	}
	parts = append(parts, part{"the pod network's start and kubelet's next status update", readyTailSeconds})
	m.add(StepReady, parts...)
	m.ready = m.total()
	return m
}

// add appends a step of the parts, named after its largest part.
func (m *bootModel) add(phase string, parts ...part) {
	st := BootStep{Phase: phase}
	top := part{}
	for _, pt := range parts {
		st.Seconds += pt.seconds
		if pt.seconds > top.seconds {
			top = pt
		}
	}
	st.Seconds = round1(st.Seconds)
	if top.what != "" {
		st.DominatedBy = fmt.Sprintf("%s, %.0f s", top.what, top.seconds)
	}
	m.steps = append(m.steps, st)
}

func (m *bootModel) total() float64 {
	t := 0.0
	for _, st := range m.steps {
		t += st.Seconds
	}
	return round1(t)
}

// download is fetching mb at the node's bandwidth, then unpacking it with dpkg.
func (m *bootModel) download(what string, mb float64) []part {
	return []part{{"downloading " + what, mb / m.bandwidthMBps}, {"dpkg unpacking and configuring " + what, mb * dpkgSecondsPerMB}}
}

// pull is pulling an image of mb and unpacking it.
func (m *bootModel) pull(ref string, mb float64) part {
	return part{"pulling " + ref, mb/m.bandwidthMBps + mb*imageUnpackSecondsPerMB}
}

// phaseParts are what one phase of the script costs; a phase the model does not know (a user's
// own script) costs nothing.
func (m *bootModel) phaseParts(ph scriptPhase) []part {
	aptUpdate := part{"apt-get update (estimate)", aptUpdateSeconds}
	switch ph.name {
	case bootstrap.PhaseMirrors, bootstrap.PhaseMounts, bootstrap.PhaseAddons:
		return []part{{"writing its files (estimate)", scriptStepSeconds}}
	case bootstrap.PhasePackages:
		return append(m.download("containerd and the base packages", containerdMB+basePackagesMB), aptUpdate)
	case bootstrap.PhaseERDMA:
		return append(m.download("the eRDMA installer", erdmaMB), part{"the eRDMA installer's module build and packages (estimate)", erdmaInstallSeconds})
	case bootstrap.PhaseDriver:
		parts := m.download("the NVIDIA driver packages, kernel headers and compiler", nvidiaComputeMB+nvidiaKernelSourceMB+nvidiaFirmwareMB+driverRestMB)
		return append(parts, aptUpdate, part{"update-initramfs", initramfsSeconds}, part{"the DKMS build of the nvidia kernel module", dkmsBuildSeconds},
			part{"loading the module and nvidia-smi", serviceStartSeconds})
	case bootstrap.PhaseFabricManager:
		return append(m.download("nvidia-fabricmanager", fabricManagerMB), part{"starting Fabric Manager (estimate)", serviceStartSeconds})
	case bootstrap.PhaseContainerRuntime:
		parts := []part{{"restarting containerd (estimate)", serviceStartSeconds}}
		if strings.Contains(ph.body, "nvidia-container-toolkit") {
			parts = append(parts, aptUpdate)
			parts = append(parts, m.download("nvidia-container-toolkit", containerToolkitMB)...)
		}
		return parts
	case bootstrap.PhaseHostCUDA:
		return append(m.download("the CUDA toolkit and NCCL", hostCUDAMB), aptUpdate)
	case bootstrap.PhaseKubelet:
		return append(m.download("kubelet, kubeadm and kubectl", kubePackagesMB), aptUpdate)
	case bootstrap.PhaseJoin, bootstrap.PhaseInit:
		return m.kubeadmParts(ph.name)
	}
	return nil
}

// kubeadmParts are kubeadm init or join: a control-plane node pulls kubeadm's images first.
func (m *bootModel) kubeadmParts(phase string) []part {
	var parts []part
	if m.controlPlane && !m.controlPlaneImagesHeld {
		parts = append(parts, m.pull("kubeadm's control-plane images", controlPlaneImagesMB))
	}
	if m.init && phase == bootstrap.PhaseInit {
		return append(parts, part{"kubeadm init (estimate)", kubeadmInitSeconds})
	}
	return append(parts, part{"kubeadm join (estimate)", kubeadmJoinSeconds})
}

// bandwidthMBps is what the node fetches at, MB/s: the type's stated baseline (the vendor's
// family pages, internal/catalog), capped by what one source serves.
func bandwidthMBps(instanceType string) float64 {
	gbps := unstatedGbps
	if t, ok := catalog.LookupInstanceType(instanceType); ok && t.NetworkGbps > 0 {
		gbps = t.NetworkGbps
	}
	return math.Min(gbps, sourceGbps) * 1000 / 8
}

// imageSize is the size of an image by its repository's last element.
func imageSize(ref string) float64 {
	name := ref[strings.LastIndex(ref, "/")+1:]
	name, _, _ = strings.Cut(name, "@")
	name, _, _ = strings.Cut(name, ":")
	if mb, ok := imageMB[name]; ok {
		return mb
	}
	return otherImageMB
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// summary is one line: the time to Ready (ready: the node gets there) and each step that took
// time, with what dominated the longest.
func (m bootModel) summary(ready bool) string {
	var parts []string
	held := 0
	longest := BootStep{}
	for _, st := range m.steps {
		if st.Held {
			held++
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f s", st.Phase, st.Seconds))
		if st.Seconds > longest.Seconds {
			longest = st
		}
	}
	s := fmt.Sprintf("modeled time to Ready %.0f s (%.1f min; the kubelet registers at %.0f s): %s", m.ready, m.ready/60, m.registered, strings.Join(parts, ", "))
	if !ready {
		s = fmt.Sprintf("modeled: the kubelet registers %.0f s after RunInstances; the node stays NotReady (its reason says why): %s", m.registered, strings.Join(parts, ", "))
	}
	if held > 0 {
		s += fmt.Sprintf("; %d phases held by image %s", held, m.imageID)
	}
	return s + "; longest: " + longest.Phase + " (" + longest.DominatedBy + ")"
}
