package nodeagent

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
)

// NodePlan is what a node's user data makes it do in Kubernetes, read statically: whether it
// creates the cluster or joins one, with which credentials, what it downloads on the way, and
// how its kubelet registers.
type NodePlan struct {
	// Init is a first control-plane node: kubeadm init. InitEndpoint is its
	// controlPlaneEndpoint ("" = its own address), Tokens its bootstrap tokens, CAHash the hash
	// of the CA its user data brings ("" = kubeadm makes one at boot), CertificateKey the key
	// it uploads the control-plane certificates with ("" = not highly available).
	Init           bool
	InitEndpoint   string
	Tokens         []PlanToken
	CAHash         string
	CertificateKey string
	// TokenPublisher is a control-plane node's join-token timer; StoredToken where a joining
	// node reads its token (nil: from its configuration). tokens.go.
	TokenPublisher *TokenPublisher
	StoredToken    *storeRef
	// CertsUploader is a control-plane node's certificate upload timer (certs.go), CertRenewer
	// its certificate renewal timer (certexpiry.go).
	CertsUploader *CertsUploader
	CertRenewer   *CertRenewer
	// EtcdSnapshotter is a control-plane node's etcd snapshot timer (etcdsnapshot.go).
	EtcdSnapshotter *EtcdSnapshotter
	// Join is the kubeadm join of a worker or a control-plane node; on a highly available
	// first node, the join its script runs instead of init when the API already answers.
	Join *JoinPlan
	// NodeName, Labels and Taints are what the kubelet registers.
	NodeName string
	Labels   map[string]string
	Taints   []corev1.Taint
	// Downloads are what the bootstrap fetches, in script order.
	Downloads []Download
	// Addons are the manifests the first control-plane node applies, in file order.
	Addons []Addon
	// ImageRepository is where kubeadm pulls the control-plane images from and
	// KubernetesVersion the ClusterConfiguration's kubernetesVersion ("" = kubeadm's own), on a
	// first control-plane node; a joining node takes both from its cluster.
	ImageRepository, KubernetesVersion string
	// KubeletVersion is the kubelet (and kubeadm) release the script installs, "1.33.6" ("" =
	// it pins none; upgrade.go).
	KubeletVersion string
	// Containerd is what the node's containerd pulls images through: its pause image and
	// registry mirrors.
	Containerd containerdSetup
	// FabricManager: the script installs NVIDIA Fabric Manager (nvidia-fabricmanager).
	FabricManager bool
	// Phases are the script's phases in the order it runs them, and Attempts how many times it
	// tries each: what the node prints on its serial console (console.go).
	Phases   []scriptPhase
	Attempts int
	// Image is what the instance's image holds (image.go): the phases marked held and the
	// Downloads of those phases left out are its doing (fromImage).
	Image imageHolds
	// ProviderID: the node registers with spec.providerID (the kubelet's --provider-id), as the
	// nodes of an autoscaling pool do (bootstrap.Options.ProviderID): the Cluster Autoscaler
	// counts it among its groups' nodes (provision.go).
	ProviderID bool
	// APIHosts is the /etc/hosts entry of the API server name (nil: the node uses addresses),
	// CertSANs a first node's apiServer.certSANs (hostsentry.go, reach.go).
	APIHosts *APIHosts
	CertSANs []string
	// PodsReachMetadata: pods on the pod network reach the instance metadata service; no unit
	// the bootstrap enables drops their traffic to it (metadataaccess.go).
	PodsReachMetadata bool
	// Shutdown is the kubelet's graceful node shutdown as the node's files set it (nil: they do
	// not; a joining node then has its cluster's, shutdown.go).
	Shutdown *ShutdownSettings
	// RotateCertificates is the kubelet's rotateCertificates as the node's files set it (nil:
	// they do not; the cluster's, else kubeadm's default, certexpiry.go).
	RotateCertificates *bool
}

// JoinPlan is one kubeadm JoinConfiguration.
type JoinPlan struct {
	Endpoint       string // discovery.bootstrapToken.apiServerEndpoint, host:port
	Token          string // secret: compared, never printed
	CAHashes       []string
	SkipCA         bool
	ControlPlane   bool
	CertificateKey string // secret
}

// Download is one thing the bootstrap fetches, from Host ("" = the image's own apt sources).
// Image marks kubeadm's image pulls, which go through containerd's registry mirrors. Phase is the
// phase whose function fetches it ("" outside any phase): a node whose image holds that phase
// (image.go) skips it, and fetches nothing of it.
type Download struct {
	Host, What string
	Image      bool
	Phase      string
}

// Addon is one add-on manifest file.
type Addon struct {
	Name, YAML string
}

// defaultImageRepository is where kubeadm pulls the control-plane and pause images from unless
// ClusterConfiguration.imageRepository says otherwise.
const defaultImageRepository = "registry.k8s.io"

var (
	urlRE       = regexp.MustCompile(`https?://[^\s'"]+`)
	aptSourceRE = regexp.MustCompile(`>\s*/etc/apt/sources\.list(\s|$)`)
	// funcStartRE is the first line of a phase's function (bootstrap.renderScript: p_<name>, "-" as "_").
	funcStartRE = regexp.MustCompile(`^p_([a-z_]+)\(\) \{$`)
)

// PlanNode reads a node's bootstrap from its cloud-init; hostname is the instance's host name,
// the node name kubeadm registers (lower-cased) when nodeRegistration.name is empty. An error means the user
// data has no gpucluster bootstrap the agent can follow.
func PlanNode(ci CloudInit, hostname string) (NodePlan, error) {
	var p NodePlan
	script, ok := ci.Files[bootstrap.ScriptPath]
	if !ok {
		return p, fmt.Errorf("the user data writes no %s: not a gpucluster node bootstrap", bootstrap.ScriptPath)
	}
	main, ok := ci.Files[bootstrap.KubeadmPath]
	if !ok {
		return p, fmt.Errorf("the user data writes no %s", bootstrap.KubeadmPath)
	}
	cfg, err := parseKubeadm(main)
	if err != nil {
		return p, fmt.Errorf("%s: %w", bootstrap.KubeadmPath, err)
	}
	reg := kubeadmNodeRegistration{}
	imageRepo := defaultImageRepository
	switch {
	case cfg.Init != nil:
		p.Init = true
		reg = cfg.Init.NodeRegistration
		for _, t := range cfg.Init.BootstrapTokens {
			ttl, err := tokenTTL(t.TTL)
			if err != nil {
				return p, fmt.Errorf("%s: %w", bootstrap.KubeadmPath, err)
			}
			p.Tokens = append(p.Tokens, PlanToken{Token: t.Token, TTL: ttl})
		}
		p.CertificateKey = cfg.Init.CertificateKey
		if cfg.Cluster != nil {
			p.InitEndpoint = cfg.Cluster.ControlPlaneEndpoint
			if cfg.Cluster.ImageRepository != "" {
				imageRepo = cfg.Cluster.ImageRepository
			}
			p.KubernetesVersion = cfg.Cluster.KubernetesVersion
			p.CertSANs = cfg.Cluster.APIServer.CertSANs
		}
		if pem, ok := ci.Files[bootstrap.CACertPath]; ok {
			cert, err := clusterca.ParseCertPEM(pem)
			if err != nil {
				return p, fmt.Errorf("%s: %w", bootstrap.CACertPath, err)
			}
			p.CAHash = clusterca.CertHash(cert)
		}
		if joinDoc, ok := ci.Files[bootstrap.KubeadmJoinPath]; ok {
			jc, err := parseKubeadm(joinDoc)
			if err != nil || jc.Join == nil {
				return p, fmt.Errorf("%s: no JoinConfiguration (%v)", bootstrap.KubeadmJoinPath, err)
			}
			p.Join = joinPlanOf(jc.Join)
		}
	default:
		reg = cfg.Join.NodeRegistration
		p.Join = joinPlanOf(cfg.Join)
	}
	p.NodeName = reg.Name
	if p.NodeName == "" {
		p.NodeName = strings.ToLower(hostname)
	}
	if p.Labels, err = reg.nodeLabels(); err != nil {
		return p, fmt.Errorf("%s: %w", bootstrap.KubeadmPath, err)
	}
	p.Taints = reg.Taints
	p.StoredToken = storedTokenRef(script)
	p.TokenPublisher = tokenPublisher(ci.Files, script)
	p.CertsUploader = certsUploader(ci.Files, script)
	p.CertRenewer = certRenewer(ci.Files, script)
	p.EtcdSnapshotter = etcdSnapshotter(ci.Files, script)
	p.Downloads = downloadsOf(script, imageRepo)
	p.Phases, p.Attempts = scriptPhases(script)
	p.KubeletVersion = kubeletVersionOf(script)
	if p.APIHosts, err = readAPIHosts(ci.Files, script); err != nil {
		return p, err
	}
	if p.Init {
		p.ImageRepository = imageRepo
	}
	p.Containerd = readContainerd(ci.Files, script)
	p.FabricManager = strings.Contains(script, fabricManagerPackage)
	p.ProviderID = strings.Contains(script, "--provider-id=")
	p.PodsReachMetadata, _ = podsReachMetadata(ci.Files, script)
	if s, ok, err := readShutdown(main, ci.Files[bootstrap.KubeletPatchPath]); err != nil {
		return p, err
	} else if ok {
		p.Shutdown = &s
	}
	if p.RotateCertificates, err = readRotation(main, ci.Files[bootstrap.KubeletPatchPath]); err != nil {
		return p, err
	}
	for _, path := range slices.Sorted(maps.Keys(ci.Files)) {
		if name, ok := strings.CutPrefix(path, bootstrap.AddonsDir+"/"); ok && !strings.Contains(name, "/") {
			p.Addons = append(p.Addons, Addon{Name: name, YAML: ci.Files[path]})
		}
	}
	return p, nil
}

func joinPlanOf(j *kubeadmJoin) *JoinPlan {
	bt := j.Discovery.BootstrapToken
	jp := &JoinPlan{Endpoint: bt.APIServerEndpoint, Token: bt.Token, CAHashes: bt.CACertHashes, SkipCA: bt.UnsafeSkipCAVerification}
	if j.ControlPlane != nil {
		jp.ControlPlane, jp.CertificateKey = true, j.ControlPlane.CertificateKey
	}
	return jp
}

// downloadsOf lists what the bootstrap script fetches: every URL curl saves (-o) and every apt
// repository it adds, the image's own apt sources in each phase that installs packages without
// replacing them, and kubeadm's image pulls, each with the phase whose function fetches it. URLs
// the script only probes (the API's /livez) are not downloads.
func downloadsOf(script, imageRepo string) []Download {
	var out []Download
	aptReplaced := false
	aptUsed := map[string]bool{} // by phase
	phase := ""
	for _, line := range strings.Split(script, "\n") {
		if m := funcStartRE.FindStringSubmatch(line); m != nil {
			phase = strings.ReplaceAll(m[1], "_", "-")
			continue
		}
		if line == "}" {
			phase = ""
			continue
		}
		add := func(d Download) {
			d.Phase = phase
			out = append(out, d)
		}
		switch {
		case aptSourceRE.MatchString(line):
			aptReplaced = true
			for _, u := range urlRE.FindAllString(line, -1) {
				add(Download{Host: hostOf(u), What: "apt sources " + u})
			}
		case strings.Contains(line, "curl ") && strings.Contains(line, " -o "):
			for _, u := range urlRE.FindAllString(line, -1) {
				add(Download{Host: hostOf(u), What: u})
			}
		case strings.Contains(line, "'deb ") || strings.Contains(line, "\"deb "):
			for _, u := range urlRE.FindAllString(line, -1) {
				add(Download{Host: hostOf(u), What: "apt repository " + u})
			}
		case strings.Contains(line, "apt-get install") && !aptReplaced && !aptUsed[phase]:
			aptUsed[phase] = true
			add(Download{What: "Ubuntu packages from the image's apt sources"})
		case strings.Contains(line, "kubeadm init") || strings.Contains(line, "join "+bootstrap.KubeadmPath):
			if !slices.ContainsFunc(out, func(d Download) bool { return strings.HasPrefix(d.What, "kubeadm images") }) {
				add(Download{Host: hostOf("https://" + imageRepo), What: "kubeadm images from " + imageRepo, Image: true})
			}
		}
	}
	return out
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Hostname()
}
