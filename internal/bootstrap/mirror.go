package bootstrap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Where the bootstrap takes packages (and where the node's pip looks) from.
const (
	// MirrorInternet leaves the image's own Ubuntu sources and takes the Kubernetes packages from
	// pkgs.k8s.io and the NVIDIA container toolkit from nvidia.github.io: the internet, through
	// the network's egress. The default outside mainland China.
	MirrorInternet = "internet"
	// MirrorAlibabaVPC takes every package from Alibaba Cloud's mirror on its internal network,
	// which ECS instances reach without a route to the internet: Ubuntu (the NVIDIA driver and
	// Fabric Manager included), the Kubernetes packages, the NVIDIA container toolkit, and PyPI
	// for the node's pip. The default in mainland China regions (RegionMirrorDefault).
	MirrorAlibabaVPC = "alibaba_vpc"
)

// PackageMirrors lists the package_mirror values, for validators and docs.
func PackageMirrors() []string { return []string{MirrorInternet, MirrorAlibabaVPC} }

// DefaultPackageMirror is package_mirror when none is set: MirrorAlibabaVPC in a mainland China
// region (cn-*, but not cn-hongkong), where pkgs.k8s.io, nvidia.github.io and NVIDIA's download
// servers answer slowly or not at all and the in-VPC mirror is always near; MirrorInternet
// elsewhere (and for an unknown region), where the upstream sources are the reference.
func DefaultPackageMirror(region string) string {
	if MainlandRegion(region) {
		return MirrorAlibabaVPC
	}
	return MirrorInternet
}

// MainlandRegion reports whether region is in mainland China: the cn-* regions but cn-hongkong
// (https://www.alibabacloud.com/help/en/ecs/regions-and-zones lists the region IDs).
func MainlandRegion(region string) bool {
	return strings.HasPrefix(region, "cn-") && region != "cn-hongkong"
}

// packageMirror is the mirror the options resolve to: PackageMirror, or the region's default.
func (o Options) packageMirror() string {
	if o.PackageMirror != "" {
		return o.PackageMirror
	}
	return DefaultPackageMirror(o.Region)
}

// Alibaba Cloud's mirror on its internal network (mirrors.aliyun.com's in-VPC name). The vendor
// documents it on its mirror site, https://developer.aliyun.com/mirror/ (Ubuntu:
// https://developer.aliyun.com/mirror/ubuntu, PyPI: https://developer.aliyun.com/mirror/pypi,
// Kubernetes: https://developer.aliyun.com/mirror/kubernetes, whose apt instructions use the
// kubernetes-new/core/stable/v1.NN/deb/ tree, a mirror of pkgs.k8s.io with the same Release.key).
// The NVIDIA container toolkit: https://mirrors.aliyun.com/libnvidia-container/ mirrors
// https://nvidia.github.io/libnvidia-container/ with the same layout (gpgkey, stable/deb/$(ARCH)).
const (
	AlibabaVPCMirrorHost = "mirrors.cloud.aliyuncs.com"
	alibabaMirrorURL     = "http://" + AlibabaVPCMirrorHost + "/"
	alibabaUbuntuURL     = alibabaMirrorURL + "ubuntu/"
	alibabaPyPIURL       = alibabaMirrorURL + "pypi/simple/"
	// PipConfPath is where the node's pip finds its index.
	PipConfPath = "/etc/pip.conf"
)

// Upstream sources (MirrorInternet). The eRDMA driver always comes from the in-VPC mirror, the
// only place the vendor publishes it; the host CUDA toolkit (HostCUDA, off by default) only from
// NVIDIA's repository.
const (
	upstreamK8sRepoFmt = "https://pkgs.k8s.io/core:/stable:/%s/deb/"
	mirrorK8sRepoFmt   = alibabaMirrorURL + "kubernetes-new/core/stable/%s/deb/"
	upstreamCTKBase    = "https://nvidia.github.io/libnvidia-container/"
	mirrorCTKBase      = alibabaMirrorURL + "libnvidia-container/"
	erdmaSetupURL      = alibabaMirrorURL + "erdma/env_setup.sh"
	cudaKeyringURL     = "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-keyring_1.1-1_all.deb"
)

// k8sRepo is the Kubernetes apt repository of the minor ("…/v1.33/deb/").
func (o Options) k8sRepo() string {
	if o.packageMirror() == MirrorAlibabaVPC {
		return fmt.Sprintf(mirrorK8sRepoFmt, o.Versions.k8sMinor())
	}
	return fmt.Sprintf(upstreamK8sRepoFmt, o.Versions.k8sMinor())
}

// ctkBase is the NVIDIA container toolkit's repository root (gpgkey, stable/deb/$(ARCH)).
func (o Options) ctkBase() string {
	if o.packageMirror() == MirrorAlibabaVPC {
		return mirrorCTKBase
	}
	return upstreamCTKBase
}

// mirrorLines are the lines that point apt (Ubuntu 22.04, jammy) and pip at the in-VPC mirror;
// none for MirrorInternet. They run before the first apt-get update. Ubuntu's restricted and
// multiverse pockets carry the NVIDIA driver and Fabric Manager packages.
func mirrorLines(mirror string) []string {
	if mirror != MirrorAlibabaVPC {
		return nil
	}
	var sources strings.Builder
	for _, suite := range []string{"jammy", "jammy-updates", "jammy-security", "jammy-backports"} {
		fmt.Fprintf(&sources, "deb %s %s main restricted universe multiverse\\n", alibabaUbuntuURL, suite)
	}
	return []string{
		"printf '" + sources.String() + "' > /etc/apt/sources.list",
		"rm -f /etc/apt/sources.list.d/ubuntu.sources",
		"printf '[global]\\nindex-url = " + alibabaPyPIURL + "\\ntrusted-host = " + AlibabaVPCMirrorHost + "\\n' > " + PipConfPath,
	}
}

// InternetSources lists what the bootstrap of these options still downloads from the internet,
// one entry per source, in the order the script fetches them: everything it downloads unless
// it comes from an in-VPC source. With the in-VPC mirror only the Kubernetes images remain
// (kubeadm's image repository is a setting of its own), and the host CUDA toolkit when asked for.
func InternetSources(o Options) []string {
	var out []string
	internet := o.packageMirror() != MirrorAlibabaVPC
	if internet {
		s := "Ubuntu packages (the image's apt sources)"
		if o.Role == RoleGPUWorker {
			s = "Ubuntu packages, the NVIDIA driver and Fabric Manager among them (the image's apt sources)"
		}
		out = append(out, s)
	}
	if o.Role == RoleGPUWorker {
		if internet {
			out = append(out, "the NVIDIA container toolkit (nvidia.github.io)")
		}
		if o.HostCUDA {
			out = append(out, "the host CUDA toolkit and NCCL (developer.download.nvidia.com)")
		}
	}
	if internet {
		out = append(out, "Kubernetes packages (pkgs.k8s.io)")
	}
	if img := imageSource(o.Kubernetes.ImageRegistry); img != "" { // registry.go
		out = append(out, img)
	}
	return slices.Clip(out)
}

// checkPackageMirror is Validate's check of Options.PackageMirror ("" is the region's default).
func checkPackageMirror(mirror string) error {
	if mirror == "" || slices.Contains(PackageMirrors(), mirror) {
		return nil
	}
	return planerr.Input("package_mirror", mirror, "is not a package mirror", "use one of "+strings.Join(PackageMirrors(), ", "))
}

// MirrorInUserData reads back which package_mirror a node's user data was rendered with, for an
// import, which has only the cloud to go by: the in-VPC mirror's Ubuntu tree appears in the document only
// when the bootstrap was rendered with MirrorAlibabaVPC. ok is false for user data this package did
// not write (empty, or with no bootstrap in it), when the caller must fall back to a default.
func MirrorInUserData(raw string) (mirror string, ok bool) {
	files, err := DocumentFiles(raw)
	if err != nil || len(files) == 0 {
		return "", false
	}
	for _, content := range files {
		if strings.Contains(content, alibabaMirrorURL+"ubuntu/") {
			return MirrorAlibabaVPC, true
		}
	}
	return MirrorInternet, true
}
