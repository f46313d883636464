package nodeagent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// cluster is the one Kubernetes cluster the agent's API server stands for: what the node that
// ran kubeadm init set up (its bootstrap tokens, its CA, its certificate key), and the
// control-plane nodes that serve its API.
type cluster struct {
	initID, initHost string
	endpoint         string // controlPlaneEndpoint, or the init node's address:6443
	tokens           []clusterToken
	formed           time.Time  // when kubeadm init ran, by the emulator's clock
	refresher        *refresher // the control plane's join-token timer (tokens.go); nil: none
	certs            certsState // the kubeadm-certs Secret and its upload timer (certs.go)
	caHash           string     // "" = kubeadm made the CA at boot: no hash pinned in advance matches
	certificateKey   string
	members          map[string]string // control-plane instance id -> its address (in the API server certificate's SANs)
	endpointIsOwnIP  bool              // no controlPlaneEndpoint: the init node serves at its address
	images           clusterImages     // kubeadm's imageRepository and version, the pod network's images
	// maxProvision is the Cluster Autoscaler's --max-node-provision-time, from the add-ons the
	// init node applies (provision.go).
	maxProvision provisionLimit
	certSANs     []string     // apiServer.certSANs: more names of the API server certificate
	etcd         []EtcdMember // etcd's member list (etcd.go)
}

// apiServerPort is kubeadm's default API server port, where a node without controlPlaneEndpoint
// serves.
const apiServerPort = "6443"

// decision is what one instance's bootstrap comes to in this round.
type decision struct {
	role   string // RoleInit, RoleControlPlane, RoleWorker
	reason string // why it does not register; "" = it registers
	// The region's verdict (judgeRegion): why the registered node stays NotReady (no pod
	// network), the conditions it registers with, and what slowed its boot.
	notReady   string
	conditions []corev1.NodeCondition
	notes      []string
}

// withRegion adds the region's verdict on a node that registers.
func (d decision) withRegion(v regionVerdict) decision {
	d.notReady, d.conditions, d.notes = v.notReady, v.conditions, v.notes
	return d
}

// Roles a node takes.
const (
	RoleInit         = "init"
	RoleControlPlane = "control-plane-join"
	RoleWorker       = "worker-join"
)

// initialise is kubeadm init on a first control-plane node: it creates the cluster when there
// is none; a highly available first node whose API already answers joins instead (its script
// checks /livez first); any other second init is refused, naming the first initialiser.
func (a *Agent) initialise(net *network, in *emulator.InstanceView, p NodePlan) decision {
	endpoint := p.InitEndpoint
	if endpoint == "" {
		endpoint = in.PrivateIP + ":" + apiServerPort
	}
	if c := a.cluster; c != nil {
		if c.initID == in.ID {
			return decision{role: RoleInit}
		}
		if p.Join != nil && endpoint == c.endpoint {
			d := a.join(net, in, p, p.Join)
			d.role = RoleControlPlane
			return d
		}
		return decision{role: RoleInit, reason: fmt.Sprintf("second kubeadm init: the API server at %s was already initialised by %s (%s); "+
			"this node would create another cluster at %s. Only the first control-plane node runs kubeadm init (control_plane_init = true); "+
			"the others join it", c.endpoint, c.initID, c.initHost, endpoint)}
	}
	if r := net.checkDownloads(in, routed(p.Downloads)); r != "" {
		return decision{role: RoleInit, reason: r}
	}
	// kubeadm init reaches the API server it starts through admin.conf (controlPlaneEndpoint),
	// and so does the node afterwards (reach.go).
	initStep := apiStep{what: fmt.Sprintf("kubeadm init on %s fails: it reaches its own API server through admin.conf at controlPlaneEndpoint %s", in.ID, endpoint),
		endpoint: endpoint, mode: p.APIHosts.mode(stepInit), serving: true}
	for _, s := range []apiStep{initStep, afterJoinStep(in, p, endpoint, true)} {
		if r := a.reachAPI(net, in, p, s); r != "" {
			return decision{role: RoleInit, reason: r}
		}
	}
	ci := clusterImages{repo: p.ImageRepository, version: p.KubernetesVersion, cni: cniImages(p.Addons)}
	rv := judgeRegion(in, p, true, ci, net.internetRoute(in) != "")
	if rv.fatal != "" {
		return decision{role: RoleInit, reason: rv.fatal}
	}
	a.cluster = &cluster{initID: in.ID, initHost: p.NodeName, endpoint: endpoint, tokens: tokensAt(p.Tokens, a.now), formed: a.now, caHash: p.CAHash,
		certificateKey: p.CertificateKey, members: map[string]string{in.ID: in.PrivateIP}, endpointIsOwnIP: p.InitEndpoint == "",
		images: ci, maxProvision: maxProvisionOf(p.Addons), certSANs: p.CertSANs, etcd: []EtcdMember{{Name: p.NodeName, InstanceID: in.ID}},
		certs: certsState{uploaded: a.now}}
	if p.CertsUploader != nil {
		a.cluster.certs.uploader = *p.CertsUploader
	}
	return decision{role: RoleInit}.withRegion(rv)
}

// join is kubeadm join: the downloads, the endpoint reachable and served by the cluster's API,
// the token one of the cluster's, the CA pinned by its hash, for a control-plane join the key of
// the uploaded certificates, and afterwards the cluster's controlPlaneEndpoint reachable (reach.go).
// A first node's join (p.Init) is the replacement join of its bootstrap.KubeadmJoinPath.
func (a *Agent) join(net *network, in *emulator.InstanceView, p NodePlan, j *JoinPlan) decision {
	role := RoleWorker
	if j.ControlPlane {
		role = RoleControlPlane
	}
	d := decision{role: role}
	if d.reason = net.checkDownloads(in, routed(p.Downloads)); d.reason != "" {
		return d
	}
	step := stepJoin
	if p.Init {
		step = stepRejoin
	}
	// While it joins, the node does not serve the API: a load balancer it backs hands it to the
	// ones that do.
	if d.reason = a.reachAPI(net, in, p, apiStep{endpoint: j.Endpoint, mode: p.APIHosts.mode(step)}); d.reason != "" {
		return d
	}
	c := a.cluster
	if host, _, _ := strings.Cut(j.Endpoint, ":"); !a.servingCertNames(host) {
		d.reason = fmt.Sprintf("the API server's certificate does not name %s: kubeadm init on %s made it for its controlPlaneEndpoint %q and the "+
			"control-plane nodes' addresses, so TLS to %s fails; set the first control-plane node's api_endpoint (controlPlaneEndpoint) to %s",
			host, c.initID, c.endpointSetting(), j.Endpoint, j.Endpoint)
		return d
	}
	token := j.Token
	if p.StoredToken != nil { // the script reads it from the join store right before kubeadm join
		if token, d.reason = a.storedToken(in.ID, p.StoredToken); d.reason != "" {
			return d
		}
	}
	if _, ok := c.token(token); !ok {
		d.reason = fmt.Sprintf("the join token is not a bootstrap token of the cluster at %s (set by %s's InitConfiguration): kubeadm join fails discovery; "+
			"pass the same join_token to every pool", j.Endpoint, c.initID)
		return d
	}
	if d.reason = c.tokenVerdict(token, j.Endpoint, a.now); d.reason != "" {
		return d
	}
	switch {
	case j.SkipCA:
	case c.caHash == "":
		d.reason = fmt.Sprintf("the cluster CA was made by kubeadm init on %s at boot, so the pinned caCertHashes %s cannot match it: "+
			"give the first control-plane node ca_cert_pem and ca_key_pem from gpucluster_cluster_ca", c.initID, strings.Join(j.CAHashes, ","))
		return d
	case !slices.Contains(j.CAHashes, c.caHash):
		d.reason = fmt.Sprintf("kubeadm join refuses the API server at %s: its CA hash %s is not among the pinned caCertHashes %s; "+
			"pass ca_cert_hash from the same gpucluster_cluster_ca as the first control-plane node's CA", j.Endpoint, c.caHash, strings.Join(j.CAHashes, ","))
		return d
	}
	if j.ControlPlane && (c.certificateKey == "" || j.CertificateKey != c.certificateKey) {
		if c.certificateKey == "" {
			d.reason = fmt.Sprintf("kubeadm join --control-plane needs the certificates the first node uploads, but %s ran kubeadm init without a certificate key (no --upload-certs)", c.initID)
		} else {
			d.reason = fmt.Sprintf("the certificate key does not decrypt the control-plane certificates %s uploaded: pass the same certificate_key to every control-plane pool", c.initID)
		}
		return d
	}
	if j.ControlPlane {
		if d.reason = c.certsVerdict(a.now); d.reason != "" {
			return d
		}
		if d.reason = versionRefusesJoin(p.KubeletVersion, c.images.version); d.reason != "" {
			return d
		}
		if d.reason = c.etcdRefusesAdd(net, p.NodeName); d.reason != "" {
			return d
		}
	}
	if d.reason = a.reachAPI(net, in, p, afterJoinStep(in, p, c.endpoint, j.ControlPlane)); d.reason != "" {
		return d
	}
	rv := judgeRegion(in, p, j.ControlPlane, c.images, net.internetRoute(in) != "")
	if d.reason = rv.fatal; d.reason == "" {
		d = d.withRegion(rv)
		if note := newerWorkerNote(p.KubeletVersion, c.images.version); note != "" {
			d.notes = append(d.notes, note)
		}
	}
	return d
}

// servingCertNames reports whether the API server certificate kubeadm makes names host: the
// controlPlaneEndpoint's host, apiServer.certSANs and every control-plane node's own address are
// in its SANs.
func (a *Agent) servingCertNames(host string) bool {
	c := a.cluster
	if h, _, _ := strings.Cut(c.endpoint, ":"); h == host || slices.Contains(c.certSANs, host) {
		return true
	}
	for _, ip := range c.members {
		if ip == host {
			return true
		}
	}
	return false
}

// endpointSetting is the controlPlaneEndpoint the init node set ("" when it used its address).
func (c *cluster) endpointSetting() string {
	if c.endpointIsOwnIP {
		return ""
	}
	return c.endpoint
}

func noneOf(targets []target) string {
	ids := make([]string, 0, len(targets))
	for _, t := range targets {
		ids = append(ids, t.in.ID)
	}
	return "none of " + strings.Join(ids, ", ")
}

func describeTargets(ts []target) string {
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s %s:%d (groups %s)", t.in.ID, t.in.PrivateIP, t.port, strings.Join(t.in.SecurityGroupIDs, ",")))
	}
	return strings.Join(parts, "; ")
}
