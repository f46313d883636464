package nodeagent

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Whether a node's pods reach the instance metadata service (issue #31). On ECS every process
// that can send to 100.100.100.200 reads the instance's user data and its RAM role's STS keys
// (https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata), and the service
// cannot tell a pod from the host: ECS has no public hop limit for it (HttpPutResponseHopLimit "is
// in invitational preview and is not publicly available",
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-modifyinstancemetadataoptions).
// A pod on the pod network sends from its veth: its packets arrive at the host and take the
// PREROUTING hooks, then FORWARD, while the host's own requests take OUTPUT (iptables(8):
// https://manpages.ubuntu.com/manpages/jammy/man8/iptables.8.html). So pods are kept out only by a
// rule that drops (or rejects) packets to the address in a chain they take and the host's requests
// do not: PREROUTING of the raw or mangle table, or FORWARD. The agent reads the node's systemd
// units for such an iptables command, and counts it only if the bootstrap script enables that
// unit: a rule nobody sets keeps nobody out. A rule in the filter table's FORWARD chain counts
// only inserted first (-I): appended, it comes after the CNI's ACCEPT rules for the pod network.
// Pods with hostNetwork send as the host does, and keep the service either way.

// metadataAddress is the metadata service's address.
const metadataAddress = "100.100.100.200"

// metadataDropRE finds an iptables command that drops or rejects packets to the metadata service,
// with its table (group 1, "" = filter), its operation (2) and its chain (3).
var metadataDropRE = regexp.MustCompile(`iptables(?:\s+-t\s+(\w+))?\s+-(I|A)\s+(\w+)(?:\s+\d+)?\s+[^'\n]*-d\s+` +
	regexp.QuoteMeta(metadataAddress) + `(?:/32)?\s+[^'\n]*-j\s+(?:DROP|REJECT)`)

// podsReachMetadata reports whether the node's pods reach the metadata service, with the unit that
// keeps them out when they do not.
func podsReachMetadata(files map[string]string, script string) (reach bool, guard string) {
	for _, path := range slices.Sorted(maps.Keys(files)) {
		unit, ok := strings.CutPrefix(path, "/etc/systemd/system/")
		if !ok || !strings.HasSuffix(unit, ".service") || !strings.Contains(script, "systemctl enable --now "+unit) {
			continue
		}
		for _, m := range metadataDropRE.FindAllStringSubmatch(files[path], -1) {
			table, op, chain := m[1], m[2], m[3]
			switch {
			case (table == "raw" || table == "mangle") && chain == "PREROUTING",
				(table == "" || table == "filter") && chain == "FORWARD" && op == "I":
				return false, unit
			}
		}
	}
	return true, ""
}

// podsReachMetadataNote is the note on a node whose pods reach the service.
const podsReachMetadataNote = "pods on this node reach the instance metadata service at " + metadataAddress +
	", and with it the node's user data and its RAM role's STS credentials: no unit the bootstrap enables drops pod traffic to it " +
	"(an iptables DROP to " + metadataAddress + " in the raw table's PREROUTING chain, which the host's own requests do not take)"

// metadataClientRE finds the add-on workloads that sign with the instance's RAM role, which they
// read from the metadata service: the Cluster Autoscaler's Alibaba Cloud provider
// (--cloud-provider=alicloud) takes the role's STS token there when it is given neither an
// AccessKey nor RRSA (github.com/kubernetes/autoscaler, cluster-autoscaler/cloudprovider/alicloud:
// alicloud_cloud_config.go isValid, metadata.go Ram/security-credentials).
var metadataClientRE = regexp.MustCompile(`--cloud-provider=alicloud`)

// workload is the part of a Deployment or DaemonSet the agent reads.
type workload struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				HostNetwork bool `json:"hostNetwork"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// blockedMetadataClients are notes for the add-on workloads that need the metadata service but
// run on the pod network of nodes whose pods do not reach it: they get no credentials.
func blockedMetadataClients(addons []Addon) []string {
	var notes []string
	for _, a := range addons {
		for _, doc := range strings.Split(a.YAML, "\n---") {
			if !metadataClientRE.MatchString(doc) {
				continue
			}
			var w workload
			if yaml.Unmarshal([]byte(doc), &w) != nil || (w.Kind != "Deployment" && w.Kind != "DaemonSet") || w.Spec.Template.Spec.HostNetwork {
				continue
			}
			notes = append(notes, fmt.Sprintf("%s %s (add-on %s) signs with the instance's RAM role, which it reads from the metadata service, but it runs on the pod network, "+
				"from which the nodes drop traffic to %s: it gets no credentials and every cloud call it makes fails. Run it with hostNetwork: true",
				w.Kind, w.Metadata.Name, a.Name, metadataAddress))
		}
	}
	return notes
}
