// Package regionreach is the project's model of what a node in an Alibaba Cloud region can
// download from: which internet hosts are blocked or unreliable from the Chinese mainland regions,
// and which hosts an ECS instance reaches inside its region without the internet. It is data, with
// the source of every row (SOURCES.md beside this file quotes each), and pure functions over it,
// so the node agent (internal/emulator/nodeagent) and the bootstrap's plan-time warnings judge a
// node's downloads by the same table.
//
// A NAT gateway or an EIP gives a node a route to the internet, not reachability: a host in the
// table is as unusable from a mainland region with a route as without one. Outside the mainland
// (cn-hongkong included: it is not behind the mainland's border filtering) the table does not
// apply and a route out suffices.
package regionreach

import (
	"fmt"
	"strings"
)

// Verdict says how a host behaves from a mainland region.
type Verdict string

const (
	// Blocked: connections time out or are reset; a bootstrap that needs the host fails.
	Blocked Verdict = "blocked"
	// Unreliable: reachable at times, slow or intermittent; a bootstrap that needs it fails
	// often enough that an unattended node must not depend on it.
	Unreliable Verdict = "unreliable"
)

// Host is one row of the table.
type Host struct {
	// Name is the host name; with Subdomains, every host under it too.
	Name       string
	Subdomains bool
	Verdict    Verdict
	// Why says what the host serves and what goes wrong, for the message that names it.
	Why string
	// Source is the public page the verdict rests on (SOURCES.md quotes it).
	Source string
}

// Sources the rows cite. SOURCES.md says what each page says.
const (
	// Alibaba Cloud Container Registry, "Sync images from sources outside China using artifact
	// subscription": pulling from Docker Hub, GCR and Quay "can fail due to network issues".
	SourceACRSubscription = "https://www.alibabacloud.com/help/en/acr/user-guide/subscribe-to-image-tags"
	// Alibaba Cloud ACK, "Using GA to accelerate cross-region container image pulling": images
	// from sources outside the mainland (docker.io) need a Global Accelerator instance.
	SourceACKGlobalAccelerator = "https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/cross-domain-accelerated-pulling-container-images"
	// kubernetes/registry.k8s.io issue 137, "china can not pull from registry.k8s.io": the
	// registry redirects to Google's Artifact Registry, which times out from the mainland; the
	// maintainers say it is hosted on GCP and they cannot do anything about it.
	SourceRegistryK8sIssue = "https://github.com/kubernetes/registry.k8s.io/issues/137"
	// kubernetes/kubernetes issue 56038, "too hard to install k8s in china": Google's package
	// repositories and gcr.io cannot be reached.
	SourceK8sChinaIssue = "https://github.com/kubernetes/kubernetes/issues/56038"
	// kubernetes/website issue 6710: apt-get install kubeadm does not work in China (the
	// Kubernetes project's package repository is not reachable).
	SourceKubeadmAptIssue = "https://github.com/kubernetes/website/issues/6710"
	// kubeadm's version lookup: "could not fetch a Kubernetes version from the internet: unable to
	// get URL https://dl.k8s.io/release/stable-1.txt ... Client.Timeout exceeded", logged by
	// cmd/kubeadm/app/util/version.go.
	SourceKubeadmVersion = "https://github.com/kubernetes/kubernetes/blob/master/cmd/kubeadm/app/util/version.go"
	// ghcr.io pulls from an Alibaba Cloud server that never finish (zenato/puppeteer-renderer
	// issue 91).
	SourceGHCRIssue = "https://github.com/zenato/puppeteer-renderer/issues/91"
	// Connecting to quay.io from China "is severely limited" (kubernetes-sigs/aws-load-balancer-controller issue 176).
	SourceQuayIssue = "https://github.com/kubernetes-sigs/aws-load-balancer-controller/issues/176"
	// GitHub downloads from behind the mainland's filtering at ~10 kB/s (sigp/lighthouse pull
	// request 1328); raw.githubusercontent.com blocked (ChatGPTNextWeb/NextChat pull request 1015).
	SourceGitHubSlow = "https://github.com/sigp/lighthouse/pull/1328"
	SourceGitHubRaw  = "https://github.com/ChatGPTNextWeb/NextChat/pull/1015"
	// nvidia.github.io resets connections from China, SNI filtering of github.io
	// (NVIDIA/nvidia-docker issue 1722).
	SourceNVIDIAGitHubIO = "https://github.com/NVIDIA/nvidia-docker/issues/1722"
	// us.download.nvidia.com answers China IP addresses with 403 (flathub
	// org.freedesktop.Platform.GL.nvidia issue 347; connection resets in NixOS/nixpkgs issue 162625).
	SourceNVIDIADriverCN = "https://github.com/flathub/org.freedesktop.Platform.GL.nvidia/issues/347"
	// developer.download.nvidia.com's CUDA repositories are "very slow" from the mainland
	// (tuna/issues issue 410, a request to mirror them).
	SourceNVIDIACUDACN = "https://github.com/tuna/issues/issues/410"
	// pip "often causes timeout in China because pypi.org is slow" (AUTOMATIC1111/stable-diffusion-webui
	// pull request 2588); Alibaba Cloud runs a PyPI mirror for this (https://developer.aliyun.com/mirror/pypi).
	SourcePyPICN = "https://github.com/AUTOMATIC1111/stable-diffusion-webui/pull/2588"

	// In-region endpoints.
	SourceAliyunMirror = "https://developer.aliyun.com/mirror/"
	// Container Registry Personal Edition endpoints: registry-vpc.<region>.aliyuncs.com (earlier
	// instances) and crpi-<id>-vpc.<region>.personal.cr.aliyuncs.com (new instances).
	SourceACRPersonalEndpoints = "https://www.alibabacloud.com/help/en/acr/user-guide/individual-edition-instance-independent-domain-name-capacity-limit"
	// Container Registry Enterprise Edition: ECS instances of a VPC in the instance's access
	// control list reach it through its VPC domain names (<instance>-registry-vpc.<region>.cr.aliyuncs.com).
	SourceACRVPCAccess = "https://www.alibabacloud.com/help/en/acr/user-guide/configure-access-over-vpcs"
	// OSS: ECS instances reach a bucket of their region on oss-<region>-internal.aliyuncs.com.
	SourceOSSInternal = "https://www.alibabacloud.com/help/en/oss/user-guide/access-to-oss-resources-from-ecs-instances-by-using-an-internal-endpoint-of-oss"
)

// mainlandHosts is the table: the hosts a GPU node's bootstrap, its images or its users commonly
// need, as they behave from a mainland region. A host not here is not known to be filtered.
var mainlandHosts = []Host{
	{Name: "docker.io", Verdict: Blocked, Why: "Docker Hub (images without a registry host are pulled from it)", Source: SourceACRSubscription},
	{Name: "registry-1.docker.io", Verdict: Blocked, Why: "Docker Hub's registry endpoint", Source: SourceACRSubscription},
	{Name: "registry.k8s.io", Verdict: Blocked, Why: "the Kubernetes project's registry (kubeadm's default imageRepository, containerd's default pause image); it redirects to Google Artifact Registry, which times out", Source: SourceRegistryK8sIssue},
	{Name: "k8s.gcr.io", Verdict: Blocked, Why: "the Kubernetes project's former registry, on Google Container Registry", Source: SourceK8sChinaIssue},
	{Name: "gcr.io", Subdomains: true, Verdict: Blocked, Why: "Google Container Registry", Source: SourceK8sChinaIssue},
	{Name: "ghcr.io", Verdict: Unreliable, Why: "GitHub Container Registry (Flannel's images): pulls time out or never finish", Source: SourceGHCRIssue},
	{Name: "quay.io", Verdict: Unreliable, Why: "Quay (Prometheus' images)", Source: SourceQuayIssue},
	{Name: "nvcr.io", Verdict: Unreliable, Why: "NVIDIA's container registry (device plugin, DCGM exporter), outside the mainland", Source: SourceACKGlobalAccelerator},
	{Name: "pkgs.k8s.io", Verdict: Unreliable, Why: "the Kubernetes project's package repository (kubelet, kubeadm, kubectl)", Source: SourceKubeadmAptIssue},
	{Name: "dl.k8s.io", Verdict: Unreliable, Why: "the Kubernetes project's release downloads (kubeadm looks up a stable-x.y label there)", Source: SourceKubeadmVersion},
	{Name: "nvidia.github.io", Verdict: Blocked, Why: "the NVIDIA container toolkit's apt repository, on GitHub Pages: connections are reset", Source: SourceNVIDIAGitHubIO},
	{Name: "us.download.nvidia.com", Verdict: Blocked, Why: "NVIDIA's driver downloads (the .run installer): China addresses get 403", Source: SourceNVIDIADriverCN},
	{Name: "developer.download.nvidia.com", Verdict: Unreliable, Why: "NVIDIA's CUDA apt repository (CUDA, NCCL, Fabric Manager)", Source: SourceNVIDIACUDACN},
	{Name: "download.nvidia.com", Subdomains: true, Verdict: Unreliable, Why: "NVIDIA's download servers", Source: SourceNVIDIADriverCN},
	{Name: "github.com", Verdict: Unreliable, Why: "GitHub (release downloads)", Source: SourceGitHubSlow},
	{Name: "objects.githubusercontent.com", Verdict: Unreliable, Why: "where GitHub release downloads redirect to", Source: SourceGitHubSlow},
	{Name: "raw.githubusercontent.com", Verdict: Blocked, Why: "GitHub's raw file host", Source: SourceGitHubRaw},
	{Name: "pypi.org", Verdict: Unreliable, Why: "the Python Package Index", Source: SourcePyPICN},
	{Name: "files.pythonhosted.org", Verdict: Unreliable, Why: "the Python Package Index's file host", Source: SourcePyPICN},
}

// MainlandHosts returns a copy of the table.
func MainlandHosts() []Host { return append([]Host(nil), mainlandHosts...) }

// Mainland reports whether the region is in the Chinese mainland: a cn-* region other than
// cn-hongkong (Hong Kong is outside the mainland's border filtering).
func Mainland(region string) bool {
	return strings.HasPrefix(region, "cn-") && region != "cn-hongkong"
}

// Filtered returns the row that makes host unusable from region: a host of the table when the
// region is in the mainland. ok is false when the host is usable there (as far as the table
// knows). In-region endpoints are never filtered.
func Filtered(region, host string) (Host, bool) {
	host = normalise(host)
	if !Mainland(region) || InRegion(region, host) {
		return Host{}, false
	}
	// An exact row wins over a row for a parent domain (us.download.nvidia.com over
	// download.nvidia.com), so the message names the most specific fact.
	var parent *Host
	for i, h := range mainlandHosts {
		if host == h.Name {
			return h, true
		}
		if h.Subdomains && strings.HasSuffix(host, "."+h.Name) && parent == nil {
			parent = &mainlandHosts[i]
		}
	}
	if parent != nil {
		return *parent, true
	}
	return Host{}, false
}

// Describe is the clause a refusal names a filtered host with: the host, the verdict, why, and
// the source.
func (h Host) Describe(host, region string) string {
	return fmt.Sprintf("%s is %s from %s: %s (source: %s)", host, h.Verdict, region, h.Why, h.Source)
}

// RouteIsNotReach is the reminder a refusal starts with: the node may well have a route out.
const RouteIsNotReach = "a Chinese mainland region, where a NAT gateway or EIP gives a route, not reachability"

// VPCMirrorHost is Alibaba Cloud's mirror site on its internal network (mirrors.aliyun.com's
// in-VPC name: Ubuntu, PyPI, the Kubernetes packages), reachable from every ECS instance.
const VPCMirrorHost = "mirrors.cloud.aliyuncs.com"

// InRegion reports whether host is an endpoint an ECS instance in region reaches over Alibaba
// Cloud's internal network, without the internet: the in-VPC mirror, Container Registry's VPC
// endpoints of the region (Personal Edition registry-vpc.<region>.aliyuncs.com and
// crpi-<id>-vpc.<region>.personal.cr.aliyuncs.com, Enterprise Edition
// <instance>-registry-vpc.<region>.cr.aliyuncs.com) and OSS's internal endpoint of the region
// (oss-<region>-internal.aliyuncs.com, and <bucket>.oss-<region>-internal.aliyuncs.com).
func InRegion(region, host string) bool {
	host = normalise(host)
	if host == VPCMirrorHost {
		return true
	}
	if region == "" {
		return false
	}
	oss := "oss-" + region + "-internal.aliyuncs.com"
	switch {
	case host == "registry-vpc."+region+".aliyuncs.com":
		return true
	case host == oss || strings.HasSuffix(host, "."+oss):
		return true
	case strings.HasSuffix(host, "-registry-vpc."+region+".cr.aliyuncs.com"):
		return true
	case strings.HasPrefix(host, "crpi-") && strings.HasSuffix(host, "-vpc."+region+".personal.cr.aliyuncs.com"):
		return true
	}
	return false
}

// normalise lower-cases a host and drops a port.
func normalise(host string) string {
	host = strings.ToLower(host)
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	return host
}
