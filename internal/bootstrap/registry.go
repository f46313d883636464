package bootstrap

// Where a node's container runtime takes images from: containerd's sandbox (pause) image, pinned
// by digest, and, with an image registry (Kubernetes.ImageRegistry), a hosts.toml per public
// registry. kubeadm's imageRepository is set in initConfig (script.go), the CNI's images in
// addons.go; the rule that maps an image into the registry is internal/images (registry.go).

import (
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// CertsDir is containerd's registry host directory: one <host>/hosts.toml per registry
// (https://github.com/containerd/containerd/blob/main/docs/hosts.md).
const CertsDir = "/etc/containerd/certs.d"

const containerdConfig = "/etc/containerd/config.toml"

// containerdImageLines are the script lines, run after `containerd config default`, that set the
// sandbox image and the registry host directory. The sandbox image is set on every node, registry
// or not: containerd 1.7's default is registry.k8s.io/pause:3.8 while kubeadm pulls pause:3.10,
// and a node would otherwise fetch a second, unpinned pause. containerd 1.x writes it as
// sandbox_image (config version 2), containerd 2.x as pinned_images.sandbox (version 3); the
// registry directory is config_path in both. The script stops if neither key was there to set.
func containerdImageLines(registry string) []string {
	pause := images.RefIn(images.Pause, registry)
	return []string{
		fmt.Sprintf("step 'containerd: sandbox image %s, registry hosts in %s'", pause, CertsDir),
		fmt.Sprintf(`sed -i -E 's#^(\s*)sandbox_image = .*#\1sandbox_image = "%[1]s"#; s#^(\s*)sandbox = .*#\1sandbox = "%[1]s"#' %[2]s`, pause, containerdConfig),
		fmt.Sprintf(`sed -i -E 's#^(\s*)config_path = .*#\1config_path = "%s"#' %s`, CertsDir, containerdConfig),
		fmt.Sprintf(`grep -qF '"%s"' %s || { echo "containerd's configuration has no sandbox image setting to change" >&2; exit 1; }`, pause, containerdConfig),
	}
}

// upstreamServer is the registry API address of a public registry name (Docker Hub's API is not
// at docker.io).
func upstreamServer(host string) string {
	if host == "docker.io" {
		return "https://registry-1.docker.io"
	}
	return "https://" + host
}

// registryHostFiles are the hosts.toml files of an image registry: every public registry gets the
// registry as a mirror. The project's own images do not need them (every reference it renders
// already names the registry); they serve images a user's workloads name by their public name,
// when the registry keeps the public repository path under its prefix (a pull-through cache, or
// an Enterprise Edition sync that keeps paths): a pull of docker.io/library/busybox asks
// <registry>/library/busybox first and falls back to Docker Hub when the mirror answers not
// found. No files without a registry.
func registryHostFiles(registry string) []writeFile {
	if registry == "" {
		return nil
	}
	host, prefix, _ := strings.Cut(registry, "/")
	var files []writeFile
	for _, upstream := range images.UpstreamHosts() {
		content := fmt.Sprintf("# Rendered by terraform-provider-gpucluster: pull %[1]s images from the image registry first.\n"+
			"server = %[2]q\n\n"+
			"[host.%[3]q]\n"+
			"  capabilities = [\"pull\", \"resolve\"]\n"+
			"  # The registry's API root with its path prefix, so %[1]s/<path> is asked as %[4]s/<path>.\n"+
			"  override_path = true\n",
			upstream, upstreamServer(upstream), "https://"+host+"/v2/"+prefix, registry)
		files = append(files, writeFile{Path: CertsDir + "/" + upstream + "/hosts.toml", Permissions: "0644", Owner: "root:root", Content: content})
	}
	return files
}

// imageSource is InternetSources' entry for container images: the public registries without an
// image registry, the registry's host when it is not an in-VPC endpoint, nothing when it is.
func imageSource(registry string) string {
	if registry == "" {
		return "Kubernetes control-plane and pause images and the CNI's images (registry.k8s.io, ghcr.io)"
	}
	host, _, _ := strings.Cut(registry, "/")
	if strings.Contains(host, "-vpc.") {
		return ""
	}
	return "container images (" + host + ", the image registry)"
}
