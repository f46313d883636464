package nodeagent

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// APIHosts is what a node's bootstrap does with the API server name (internal/bootstrap
// apiname.go): the /etc/hosts entry its script bootstrap.APIHostsPath writes, which maps Name to
// LB (the load balancer's address, mode bootstrap.APIHostsModeLB) or to the node's own private
// address (bootstrap.APIHostsModeSelf), and the mode the bootstrap script is in at each step that
// reaches the API, read in script order as the node runs it. "" is a step before any entry: the
// name does not resolve there.
type APIHosts struct {
	Name, LB string
	// AtInit is the mode at kubeadm init, AtJoin at the join of bootstrap.KubeadmPath, AtRejoin at
	// the join of bootstrap.KubeadmJoinPath (a replacement first node), After the mode the script
	// leaves the node in: what kubelet.conf, admin.conf and the add-ons resolve the name to.
	AtInit, AtJoin, AtRejoin, After string
}

// readAPIHosts reads the hosts entry of a node's user data: nil when it writes no
// bootstrap.APIHostsPath (its bootstrap reaches the API by address).
func readAPIHosts(files map[string]string, script string) (*APIHosts, error) {
	content, ok := files[bootstrap.APIHostsPath]
	if !ok {
		return nil, nil
	}
	h := &APIHosts{}
	for _, line := range strings.Split(content, "\n") {
		if v, ok := strings.CutPrefix(line, "name="); ok {
			h.Name = v
		}
		if v, ok := strings.CutPrefix(line, "lb="); ok {
			h.LB = v
		}
	}
	if h.Name == "" || h.LB == "" {
		return nil, fmt.Errorf("%s sets no name= or lb=", bootstrap.APIHostsPath)
	}
	mode := ""
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, bootstrap.APIHostsPath+" "):
			mode = strings.TrimPrefix(line, bootstrap.APIHostsPath+" ")
		case strings.HasPrefix(line, "kubeadm init --config"):
			h.AtInit = mode
		case line == "join "+bootstrap.KubeadmPath:
			h.AtJoin = mode
		case line == "join "+bootstrap.KubeadmJoinPath:
			h.AtRejoin = mode
		}
	}
	h.After = mode
	return h, nil
}

// resolveHost is the address host resolves to on node in when its hosts entry is in mode, as the
// node's resolver does: an address is itself; the API server name is what the entry maps it to;
// any other name does not resolve, because the emulated VPC serves no DNS zone (no Alibaba Cloud
// DNS PrivateZone): the string says why.
func resolveHost(in *emulator.InstanceView, h *APIHosts, host, mode string) (string, string) {
	if _, err := netip.ParseAddr(host); err == nil {
		return host, ""
	}
	switch {
	case h == nil || host != h.Name:
		return "", fmt.Sprintf("%s does not resolve on %s: its bootstrap writes no /etc/hosts entry for it and the VPC has no DNS record of it", host, in.ID)
	case mode == bootstrap.APIHostsModeLB:
		return h.LB, ""
	case mode == bootstrap.APIHostsModeSelf:
		return in.PrivateIP, ""
	}
	return "", fmt.Sprintf("%s does not resolve on %s at this step: its bootstrap maps it in /etc/hosts (%s) only later", host, in.ID, bootstrap.APIHostsPath)
}
