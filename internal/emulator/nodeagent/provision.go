package nodeagent

import (
	"fmt"
	"regexp"
	"time"
)

// The Cluster Autoscaler's patience with a node it launched (issue #30): "Cluster Autoscaler
// expects requested nodes to appear within 15 minutes (configured by --max-node-provision-time
// flag.) After this time, if they are still unregistered, it stops considering them in
// simulations and may attempt to scale up a different group if the pods are still pending. It
// will also attempt to remove any nodes left unregistered after this time."
// (https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md#how-does-scale-up-work;
// the flag's default, 15 minutes, is in the FAQ's parameter table.)
//
// The nodes that limit applies to are the autoscaler's: the nodes of an autoscaling pool, which
// register with a provider id (the alicloud provider maps nodes to scaling groups by it:
// internal/manifests autoscaler.go) — NodePlan.ProviderID. A fixed pool's node is nobody's to
// remove, so it gets no note. The limit is the --max-node-provision-time the cluster's autoscaler
// add-on passes (the first control-plane node applies it, internal/manifests
// ClusterAutoscalerArgs), else the upstream default. What it is compared with is the modeled time
// the node's kubelet registers (boottime.go): the autoscaler waits for the node to appear, not
// for it to be Ready.

// upstreamMaxProvision is --max-node-provision-time's default (the FAQ above).
const upstreamMaxProvision = 15 * time.Minute

// maxProvisionRE finds the flag in an add-on manifest: a container argument
// "--max-node-provision-time=25m" (Go duration syntax, which the autoscaler's flag parser takes).
var maxProvisionRE = regexp.MustCompile(`--max-node-provision-time=([0-9][0-9a-zµ.]*)`)

// provisionLimit is the autoscaler's limit and where it comes from.
type provisionLimit struct {
	limit time.Duration
	from  string
}

// maxProvisionOf reads the limit from the add-ons (the last file that sets it wins, as the last
// applied manifest does), else the upstream default.
func maxProvisionOf(addons []Addon) provisionLimit {
	l := provisionLimit{upstreamMaxProvision, "the Cluster Autoscaler's default --max-node-provision-time (the cluster's add-ons set none)"}
	for _, a := range addons {
		for _, m := range maxProvisionRE.FindAllStringSubmatch(a.YAML, -1) {
			if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
				l = provisionLimit{d, "--max-node-provision-time=" + m[1] + " of the cluster's autoscaler add-on " + a.Name}
			}
		}
	}
	return l
}

// provisionNote is the note on an autoscaled node whose kubelet registers after the limit ("" when
// it registers in time, or the node is no autoscaler's).
func provisionNote(p NodePlan, m bootModel, l provisionLimit) string {
	if !p.ProviderID || time.Duration(m.registered*float64(time.Second)) <= l.limit {
		return ""
	}
	return fmt.Sprintf("the Cluster Autoscaler would give up on this node: its kubelet registers %.0f s after RunInstances in the model, later than %s (%s); "+
		"the autoscaler stops counting it, may scale up another group, and removes it as long-unregistered, so the pool never grows. "+
		"Boot it from a gpucluster_node_image that holds its install phases, or raise the limit", m.registered, l.limit, l.from)
}
