package bootstrap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Where the bootstrap takes Ubuntu packages (and where the node's pip looks) from.
const (
	// MirrorInternet leaves the image's own sources: the internet, through the network's egress.
	MirrorInternet = "internet"
	// MirrorAlibabaVPC points apt at Alibaba Cloud's Ubuntu mirror and pip at its PyPI mirror,
	// both on the in-VPC address that ECS instances reach without a public route.
	MirrorAlibabaVPC = "alibaba_vpc"
)

// PackageMirrors lists the package_mirror values, for validators and docs.
func PackageMirrors() []string { return []string{MirrorInternet, MirrorAlibabaVPC} }

// Alibaba Cloud's mirror on its internal network (mirrors.aliyun.com's in-VPC name). The vendor
// documents it on its mirror site, https://developer.aliyun.com/mirror/ (Ubuntu:
// https://developer.aliyun.com/mirror/ubuntu, PyPI: https://developer.aliyun.com/mirror/pypi).
const (
	AlibabaVPCMirrorHost = "mirrors.cloud.aliyuncs.com"
	alibabaUbuntuURL     = "http://" + AlibabaVPCMirrorHost + "/ubuntu/"
	alibabaPyPIURL       = "http://" + AlibabaVPCMirrorHost + "/pypi/simple/"
	// PipConfPath is where the node's pip finds its index.
	PipConfPath = "/etc/pip.conf"
)

// mirrorLines are the script lines that point apt (Ubuntu 22.04, jammy) and pip at the mirror;
// none for MirrorInternet. They run before the first apt-get update.
func mirrorLines(mirror string) []string {
	if mirror != MirrorAlibabaVPC {
		return nil
	}
	var sources strings.Builder
	for _, suite := range []string{"jammy", "jammy-updates", "jammy-security", "jammy-backports"} {
		fmt.Fprintf(&sources, "deb %s %s main restricted universe multiverse\\n", alibabaUbuntuURL, suite)
	}
	return []string{
		"step 'package mirror: " + AlibabaVPCMirrorHost + " (in-VPC)'",
		"printf '" + sources.String() + "' > /etc/apt/sources.list",
		"rm -f /etc/apt/sources.list.d/ubuntu.sources",
		"printf '[global]\\nindex-url = " + alibabaPyPIURL + "\\ntrusted-host = " + AlibabaVPCMirrorHost + "\\n' > " + PipConfPath,
	}
}

// InternetSources lists what the bootstrap of these options still downloads from the internet,
// one entry per source, in the order the script fetches them: everything it downloads unless
// it comes from an in-VPC source. Empty would mean the bootstrap runs without a route out; with
// today's script it never is (NVIDIA's and the Kubernetes project's repositories and images have
// no in-VPC mirror the provider can rely on).
func InternetSources(o Options) []string {
	var out []string
	if o.PackageMirror != MirrorAlibabaVPC {
		out = append(out, "Ubuntu packages (the image's apt sources)")
	}
	if o.Role == RoleGPUWorker {
		out = append(out,
			"the NVIDIA driver (us.download.nvidia.com)",
			"CUDA and NCCL (developer.download.nvidia.com)",
			"the NVIDIA container toolkit (nvidia.github.io)")
	}
	out = append(out, "Kubernetes packages (pkgs.k8s.io)")
	if img := imageSource(o.Kubernetes.ImageRegistry); img != "" { // registry.go
		out = append(out, img)
	}
	return slices.Clip(out)
}

// checkPackageMirror is Validate's check of Options.PackageMirror ("" is MirrorInternet).
func checkPackageMirror(mirror string) error {
	if mirror == "" || slices.Contains(PackageMirrors(), mirror) {
		return nil
	}
	return planerr.Input("package_mirror", mirror, "is not a package mirror", "use one of "+strings.Join(PackageMirrors(), ", "))
}
