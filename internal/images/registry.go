package images

// One registry setting for every image the cluster runs. Mainland China networks do not reach
// the public registries the table pulls from (registry.k8s.io, docker.io, ghcr.io, quay.io,
// nvcr.io), so teams there copy the images into a registry in their region and point the cluster
// at it. A registry here is a prefix, host[:port]/path, such as
// registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster (Container Registry Personal Edition, a
// namespace, through its VPC endpoint) or
// example-registry-vpc.cn-wulanchabu.cr.aliyuncs.com/gpucluster (an Enterprise Edition instance).
//
// The rule, the same one a team's sync follows:
//
//	<upstream registry>/<path>/<name>:<tag>[@<digest>]  ->  <registry>/<name>:<tag>[@<digest>]
//
// the last element of the repository path under the prefix, tag and digest unchanged. Why the
// last element: it is how kubeadm names the control-plane images under a custom imageRepository
// (<repo>/kube-apiserver, <repo>/etcd, <repo>/pause, and <repo>/coredns, not coredns/coredns:
// kubeadm adds the coredns/ level only for registry.k8s.io itself, GetDNSImage in
// https://github.com/kubernetes/kubernetes/blob/master/cmd/kubeadm/app/images/images.go), and a
// Personal Edition repository is one level under its namespace (namespace/repository). The
// digest survives a copy that keeps the image index (skopeo copy --all, crane copy, Container
// Registry's image sync), so a mirrored reference is the same image.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// UpstreamHosts are the public registries the table pulls from, plus gcr.io (older Kubernetes
// images): with a registry set, no rendered reference may name one.
func UpstreamHosts() []string {
	return []string{"docker.io", "registry.k8s.io", "gcr.io", "ghcr.io", "quay.io", "nvcr.io"}
}

// MirrorName is the reference of i in registry by the rule above; with registry "" it is i.Ref().
func (i Image) MirrorName(registry string) string {
	if registry == "" {
		return i.Ref()
	}
	return i.refAt(registry + "/" + i.Short())
}

// RefIn is Get(name).MirrorName(registry).
func RefIn(name, registry string) string { return Get(name).MirrorName(registry) }

// DefaultNamespace is the Container Registry namespace the mainland default points at.
const DefaultNamespace = "gpucluster"

// Mainland reports whether region is in mainland China: the cn-* regions but Hong Kong
// (cn-hongkong reaches the public registries). Container Registry's region ids:
// https://www.alibabacloud.com/help/doc-detail/215426.htm
func Mainland(region string) bool {
	return strings.HasPrefix(region, "cn-") && region != "cn-hongkong"
}

// DefaultRegistry is the registry a region uses when the user sets none: in mainland China the
// Container Registry Personal Edition namespace DefaultNamespace on the region's VPC endpoint
// (registry-vpc.<region>.aliyuncs.com, reachable from the VPC without a public route; the vendor's
// own examples pull from it, such as registry-vpc.${region}.aliyuncs.com/eci_open/nginx:alpine in
// https://help.aliyun.com/zh/terraform/alicloud-eci-image-cache). Where the region offers no
// Personal Edition (the region table above), set image_registry to an Enterprise Edition
// instance. Outside mainland China "" (the upstream registries). The namespace is not made by the
// project: whoever uses the default creates it and syncs the images into it (SyncNote says what
// to do).
func DefaultRegistry(region string) string {
	if !Mainland(region) {
		return ""
	}
	return "registry-vpc." + region + ".aliyuncs.com/" + DefaultNamespace
}

// SyncNote is the plan-time warning for a region that defaults to DefaultRegistry: the registry
// the user must create, the images to copy, and the page that explains it.
func SyncNote(region string) string {
	reg := DefaultRegistry(region)
	var names []string
	for _, i := range table {
		names = append(names, i.TagRef())
	}
	return fmt.Sprintf("%s is in mainland China, whose networks do not reach registry.k8s.io, docker.io, ghcr.io, quay.io or nvcr.io, "+
		"so every image the cluster runs (kubeadm's control-plane images, containerd's pause image, the CNI and the add-ons) is taken from "+
		"image_registry, by default %q. The provider cannot create it: in Container Registry (Personal Edition) in %s, create the namespace %q "+
		"with public repositories (or give the nodes pull credentials), and copy into it, each under the last part of its name "+
		"(ghcr.io/flannel-io/flannel:v0.27.4 -> %s/flannel:v0.27.4), keeping the image index so the digests stay valid: %s, "+
		"and the control-plane images of `kubeadm config images list --kubernetes-version <version>`. The `images` output lists each "+
		"with its mirrored name and digest; the guide \"Container images in mainland China\" shows a sync. "+
		"Set image_registry to your own registry (an Enterprise Edition instance, such as <instance>-registry-vpc.%s.cr.aliyuncs.com/<namespace>) "+
		"to use it instead and silence this warning.",
		region, reg, region, DefaultNamespace, reg, strings.Join(names, ", "), region)
}

// registryRE is host[.domain][:port]/path: a lower-case host with at least one dot or a port
// (so "gpucluster" alone, which a runtime would read as a Docker Hub user, is refused), then one
// or more path elements, no scheme, tag, digest or trailing slash.
var registryRE = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)+$`)

// CheckRegistry checks an image_registry value at attribute path attr ("" is valid: the upstream
// registries).
func CheckRegistry(attr, registry string) error {
	if registry == "" {
		return nil
	}
	host, _, _ := strings.Cut(registry, "/")
	why := ""
	switch {
	case strings.Contains(registry, "://"):
		why = "has a scheme; containerd and kubeadm take a registry without one"
	case !registryRE.MatchString(registry):
		why = "is not a registry prefix host[:port]/path in lower case"
	case !strings.ContainsAny(host, ".:"):
		why = "has no registry host (a name without a dot or port is read as a Docker Hub account)"
	}
	if why == "" {
		return nil
	}
	fix := "use a registry and namespace such as registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster, or \"\" for the upstream registries"
	return planerr.New(attr, registry, why, fix, fmt.Errorf("%s %q %s; %s", attr, registry, why, fix))
}
