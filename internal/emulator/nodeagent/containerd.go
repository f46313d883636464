package nodeagent

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// What containerd pulls through, read from the node's user data the way containerd reads its
// files at boot.
//
// The pause (sandbox) image: containerd's CRI plugin starts every pod in a sandbox container of
// the image its configuration names (sandbox_image in containerd 1.x, under
// [plugins."io.containerd.grpc.v1.cri"]; pinned_images.sandbox in 2.x); the kubelet does not pick
// it. Unset, containerd 1.7 (Ubuntu 22.04's package) uses registry.k8s.io/pause:3.8:
// https://github.com/containerd/containerd/blob/release/1.7/docs/cri/config.md ("sandbox_image =
// \"registry.k8s.io/pause:3.8\"").
//
// Registry mirrors: containerd looks for /etc/containerd/certs.d/<registry>/hosts.toml (the
// directory its config_path names) and tries each [host."..."] in file order before the server
// (the registry itself unless hosts.toml says `server = ...`); a _default directory applies to
// every registry without its own: https://github.com/containerd/containerd/blob/main/docs/hosts.md
// containerd 1.x reads that directory only when the CRI plugin's registry config_path names it,
// and `containerd config default` of 1.7 writes config_path = "" (the release/1.7 config.md
// above), so a bootstrap that writes hosts.toml files must also set config_path.
const (
	defaultSandboxImage = "registry.k8s.io/pause:3.8"
	containerdDir       = "/etc/containerd/"
	certsDir            = "/etc/containerd/certs.d/"
	hostsFile           = "/hosts.toml"
)

var (
	// sandboxRE finds the sandbox image in a containerd configuration (1.x sandbox_image, 2.x
	// pinned_images' sandbox), or in a script line that edits one (sed ... sandbox_image = "...").
	// No \b before the key: a sed replacement writes it after a back-reference (\1sandbox_image).
	sandboxRE = regexp.MustCompile(`(?:sandbox_image|sandbox)\s*=\s*\\?["']([^"'\\\s]+)\\?["']`)
	// configDefaultRE is the script writing containerd's defaults over a configuration file.
	configDefaultRE = regexp.MustCompile(`containerd config default\s*(?:\|\s*(?:sudo\s+)?tee\s+(?:-a\s+)?|>\s*)(\S+)`)
	hostSectionRE   = regexp.MustCompile(`^\s*\[host\.["']([^"']+)["']\]`)
	serverRE        = regexp.MustCompile(`^\s*server\s*=\s*["']([^"']+)["']`)
	configPathRE    = regexp.MustCompile(`config_path\s*=\s*\\?["'][^"']*` + regexp.QuoteMeta(strings.TrimSuffix(certsDir, "/")))
)

// containerdSetup is what the node's containerd pulls images through.
type containerdSetup struct {
	// SandboxImage is the pause image pods start in; SandboxFrom says where it was set
	// (a file, the script, or containerd's default).
	SandboxImage, SandboxFrom string
	// Mirrors maps a registry host ("_default" for every registry without its own) to the hosts
	// containerd contacts for it, in order: the hosts.toml hosts, then its server.
	Mirrors map[string][]string
	// MirrorsIgnored says why hosts.toml files the user data writes are not read ("" = they
	// are, or there are none).
	MirrorsIgnored string
}

// readContainerd reads the containerd configuration the node boots with: the files write_files
// writes under /etc/containerd (unless the script then writes containerd's defaults over
// them), then the script's own edits, in script order (cloud-init writes files before it runs
// the script).
func readContainerd(files map[string]string, script string) containerdSetup {
	overwritten := map[string]bool{}
	for _, m := range configDefaultRE.FindAllStringSubmatch(script, -1) {
		overwritten[m[1]] = true
	}
	c := containerdSetup{SandboxImage: defaultSandboxImage, SandboxFrom: "containerd's default (no sandbox_image in its configuration)",
		Mirrors: map[string][]string{}}
	configPath := configPathRE.MatchString(script)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		content := files[path]
		switch {
		case strings.HasPrefix(path, certsDir) && strings.HasSuffix(path, hostsFile):
			registry := strings.TrimSuffix(strings.TrimPrefix(path, certsDir), hostsFile)
			if !strings.Contains(registry, "/") {
				c.Mirrors[registry] = hostsOf(registry, content)
			}
		case strings.HasPrefix(path, containerdDir) && strings.HasSuffix(path, ".toml") && !overwritten[path]:
			if m := sandboxRE.FindStringSubmatch(content); m != nil {
				c.SandboxImage, c.SandboxFrom = m[1], path
			}
			configPath = configPath || configPathRE.MatchString(content)
		}
	}
	for _, line := range strings.Split(script, "\n") {
		if m := sandboxRE.FindStringSubmatch(line); m != nil {
			c.SandboxImage, c.SandboxFrom = m[1], "the bootstrap script ("+strings.TrimSpace(line)+")"
		}
	}
	if len(c.Mirrors) > 0 && !configPath {
		c.MirrorsIgnored = "the user data writes " + certsDir + "*" + hostsFile + " but no containerd configuration sets config_path to " +
			strings.TrimSuffix(certsDir, "/") + ", so containerd 1.7 does not read them"
		c.Mirrors = map[string][]string{}
	}
	return c
}

// hostsOf reads one hosts.toml: its [host."..."] entries in order, then its server (the
// registry itself by default; docker.io's is registry-1.docker.io).
func hostsOf(registry, content string) []string {
	var hosts []string
	server := "https://" + registry
	if registry == "docker.io" {
		server = "https://registry-1.docker.io"
	}
	for _, line := range strings.Split(content, "\n") {
		if m := hostSectionRE.FindStringSubmatch(line); m != nil {
			hosts = append(hosts, hostOf(withScheme(m[1])))
		} else if m := serverRE.FindStringSubmatch(line); m != nil {
			server = m[1]
		}
	}
	return append(hosts, hostOf(withScheme(server)))
}

func withScheme(s string) string {
	if strings.Contains(s, "://") {
		return s
	}
	return "https://" + s
}

// registryOf is the registry host of an image reference: its first path element when that
// names a host (has a dot or a port, or is localhost), else Docker Hub.
func registryOf(ref string) string {
	first, _, ok := strings.Cut(ref, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

// pullHosts are the hosts containerd contacts, in order, to pull ref.
func (c containerdSetup) pullHosts(ref string) []string {
	registry := registryOf(ref)
	if hosts, ok := c.Mirrors[registry]; ok {
		return hosts
	}
	upstream := registry
	if registry == "docker.io" {
		upstream = "registry-1.docker.io"
	}
	if hosts, ok := c.Mirrors["_default"]; ok {
		// _default's hosts come first; the registry itself stays the server.
		return append(slices.Clone(hosts[:len(hosts)-1]), upstream)
	}
	return []string{upstream}
}
