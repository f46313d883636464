package bootstrap

// Baking a node image: an image builder (an ECS instance from the public Ubuntu 22.04 image) runs
// the install phases a node of the image's role would run at boot (installPhases: a GPU worker's
// mirrors, packages, eRDMA, driver, Fabric Manager, container runtime, host CUDA, kubelet; a
// control-plane node's mirrors, packages, container runtime without the NVIDIA toolkit, kubelet),
// pulls the cluster's images into containerd (on a control-plane image kubeadm's own images too),
// checks what it installed, seals the machine and powers off; CreateImage then makes
// an image of its disk. A node booted from that image runs its own script: every install phase
// whose marker holds the phase's digest (phases.go) is skipped, so the node only mounts and
// joins. A phase the node would run differently (another driver, registry or mirror) has another
// digest and runs again: a stale image costs time, never a wrong node.
//
// Sealing (the seal phase) leaves nothing instance-specific and nothing that would run again on
// the node's first boot: the builder's bootstrap unit and script are removed (the node's
// cloud-init writes its own and starts it), cloud-init's per-instance state and the machine id
// are cleared (cloud-init runs the node's user data as a new instance's; systemd makes a new
// machine id), and the logs start empty. The markers stay: they are what the node skips by.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Phases only an image builder runs.
const (
	// PhaseImages pulls the cluster's container images into containerd's k8s.io namespace,
	// where kubelet finds them: no pull at the node's first pod start.
	PhaseImages = "images"
	// PhaseSeal checks the install and clears the builder's identity (see the top of the file).
	PhaseSeal = "seal"
)

// BakeOptions is what an image holds. The fields mean what they mean in Options; a node takes the
// image's install phases only when its own Options give the same ones.
type BakeOptions struct {
	// Role is the role of the nodes the image is for: RoleGPUWorker ("" too) or
	// RoleControlPlane. A control-plane image has no GPU software, so NVSwitch and HostCUDA must
	// be false, and it holds kubeadm's control-plane images (ControlPlaneImagesPull).
	Role     string
	Versions Versions
	// ImageRegistry is kubernetes.image_registry: the sandbox image and the registry mirrors the
	// container runtime phase writes, and where Images are pulled from.
	ImageRegistry string
	PackageMirror string
	Region        string
	ERDMA         bool
	// NVSwitch installs Fabric Manager; an image made with it serves NVSwitch types only (the
	// driver phase of a type without NVSwitch differs, and runs again).
	NVSwitch bool
	HostCUDA bool
	// NFS installs the NFS client (nfs-common), as a node with NAS or CPFS mounts does; a node
	// whose need differs from the image's runs the packages phase again.
	NFS bool
	// Images are the references to pre-pull, such as images.RefIn(name, ImageRegistry).
	Images []string
}

// role is Role with its default.
func (b BakeOptions) role() string {
	if b.Role == "" {
		return RoleGPUWorker
	}
	return b.Role
}

// nodeOptions are the Options of a node of the image's role whose install phases are the
// image's.
func (b BakeOptions) nodeOptions() Options {
	o := Options{Role: b.role(), Versions: b.Versions.WithDefaults(), PackageMirror: b.PackageMirror, Region: b.Region,
		ERDMA: b.ERDMA, NVSwitch: b.NVSwitch, HostCUDA: b.HostCUDA, Kubernetes: Kubernetes{ImageRegistry: b.ImageRegistry}}
	if b.NFS {
		// Any NFS mount makes the packages phase install the client; the mount itself is the
		// node's (its mounts phase), not the image's.
		o.Mounts = []string{"file-system.nas.aliyuncs.com:/ /mnt/image-nfs nfs vers=3,nolock 0 0"}
	}
	return o
}

// ValidateBake checks what Options' validation checks of an image's settings, with the same
// attribute names.
func ValidateBake(b BakeOptions) (warnings []string, err error) {
	if warnings, err = b.Versions.Check(); err != nil {
		if pe, ok := planerr.As(err); ok {
			return nil, pe.Under("versions")
		}
		return nil, err
	}
	if err := checkPackageMirror(b.PackageMirror); err != nil {
		return nil, err
	}
	if err := images.CheckRegistry("image_registry", b.ImageRegistry); err != nil {
		return nil, err
	}
	switch b.role() {
	case RoleGPUWorker:
	case RoleControlPlane:
		// Refused rather than ignored: the image would not hold what the setting asks for.
		if b.NVSwitch {
			return nil, planerr.Input("nvswitch", "true", "installs Fabric Manager, which a control-plane image (no GPU) does not hold", "leave nvswitch unset or false with role = \"control_plane\"")
		}
		if b.HostCUDA {
			return nil, planerr.Input("host_cuda", "true", "installs the CUDA toolkit, which a control-plane image (no GPU) does not hold", "leave host_cuda unset or false with role = \"control_plane\"")
		}
	default:
		return nil, planerr.Input("role", b.Role, "is not a node role", "use \""+RoleGPUWorker+"\" or \""+RoleControlPlane+"\"")
	}
	for i, ref := range b.Images {
		if ref == "" || strings.ContainsAny(ref, " \t\n'\"`$;&|") {
			return nil, planerr.Input(planerr.Index("images", i), ref, "is not an image reference", "use registry/path/name:tag or name@sha256:<digest>")
		}
	}
	return warnings, nil
}

// bakePhases are the builder's phases: the install phases of a node of the image's role with
// these options, exactly as the node's script has them, then images and seal.
func bakePhases(b BakeOptions) []phase {
	var out []phase
	for _, p := range nodePhases(b.nodeOptions().withPlaceholderJoin()) {
		if slices.Contains(installPhases, p.name) {
			out = append(out, p)
		}
	}
	controlPlane := b.role() == RoleControlPlane
	if len(b.Images) > 0 || controlPlane {
		pull := []string{"systemctl start containerd"}
		for _, ref := range b.Images {
			// --hosts-dir: through the registry mirrors the container runtime phase configured,
			// as kubelet's pulls go. Layers only for this machine's platform (no --all-platforms).
			pull = append(pull, fmt.Sprintf("ctr -n k8s.io images pull --hosts-dir %s '%s' >/dev/null", CertsDir, ref))
		}
		if controlPlane {
			pull = append(pull, b.ControlPlaneImagesPull())
		}
		out = append(out, phase{PhaseImages, pull})
	}
	seal := []string{
		// What a node relies on is there: the kubelet, kubeadm and the container runtime, and on
		// a GPU image the driver's kernel module built for this kernel.
		"kubeadm version -o short",
		"systemctl is-enabled kubelet containerd",
	}
	if !controlPlane {
		seal = append(seal, `modinfo -F version nvidia`)
	}
	seal = append(seal,
		// The builder's own bootstrap must not run on the node's first boot: the node's
		// cloud-init writes the node's script and unit and starts them.
		"systemctl disable "+BootstrapUnit,
		"rm -f "+systemdDir+BootstrapUnit+" "+ScriptPath,
		"cloud-init clean --logs --seed",
		"truncate -s 0 /etc/machine-id",
		"rm -f /var/lib/dbus/machine-id",
		"apt-get clean",
		`rm -f "$S/nouveau-reboot"`,
	)
	return append(out, phase{PhaseSeal, seal})
}

// ControlPlaneImagesPull is the images phase's line that pulls kubeadm's control-plane images
// (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, etcd, coredns) from the
// cluster's imageRepository at the exact release the kubelet phase installs: what kubeadm init
// and kubeadm join --control-plane pull in their preflight, which skips an image already present
// (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-config/#cmd-config-images-pull).
// The version is given, never a label such as stable-1: kubeadm would ask dl.k8s.io for it.
// kubeadm pulls through the CRI, so through the registry mirrors containerd was configured with.
// Without ImageRegistry kubeadm's default repository, registry.k8s.io, is the cluster's too.
func (b BakeOptions) ControlPlaneImagesPull() string {
	repo := ""
	if b.ImageRegistry != "" {
		repo = fmt.Sprintf(" --image-repository '%s'", b.ImageRegistry)
	}
	return fmt.Sprintf("kubeadm config images pull%s --kubernetes-version 'v%s'", repo, b.Versions.WithDefaults().k8sRelease())
}

// withPlaceholderJoin gives a node's Options what nodePhases needs for its join phase, which
// the image leaves out: an endpoint and a token of the right forms, and on a control-plane node a
// certificate key (it joins as the second and later control-plane nodes do).
func (o Options) withPlaceholderJoin() Options {
	o.Kubernetes.APIEndpoint = "127.0.0.1:6443"
	o.Kubernetes.JoinToken = "abcdef.0123456789abcdef"
	if o.Role == RoleControlPlane {
		o.Kubernetes.JoinControlPlane = true
		o.Kubernetes.CertificateKey = strings.Repeat("0", 64)
	}
	return o
}

// BakeScript is the builder's script: the install phases, images and seal, ending baked, then a
// power-off (the image is made of a stopped instance's disk; GPUCLUSTER_POWEROFF replaces the
// command, for tests).
func BakeScript(b BakeOptions) string {
	s := renderScriptEnding("image builder", bakePhases(b), StateBaked)
	return s + "${GPUCLUSTER_POWEROFF:-systemctl poweroff --no-block}\n"
}

// RenderBake is the builder's user data (a cloud-config: its script, its unit and the registry
// mirrors), to be packed as a node's is (PackUserData).
func RenderBake(b BakeOptions) (string, error) {
	if _, err := ValidateBake(b); err != nil {
		return "", err
	}
	b.Versions = b.Versions.WithDefaults()
	cc := cloudConfig{}
	cc.WriteFiles = append(cc.WriteFiles,
		writeFile{Path: ScriptPath, Permissions: "0700", Owner: "root:root", Encoding: "gz+b64", Content: gzipBase64(BakeScript(b))},
		writeFile{Path: systemdDir + BootstrapUnit, Permissions: "0644", Owner: "root:root", Content: bootstrapUnit})
	cc.WriteFiles = append(cc.WriteFiles, registryHostFiles(b.ImageRegistry)...)
	return cc.document()
}
