package bootstrap

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Fixed parts of the node's configuration; where the bootstrap downloads from is in sources.go.
const (
	// JoinTokenTTL is the life of a bootstrap token the provider configures: at most 24 h.
	JoinTokenTTL    = "24h0m0s"
	criSocket       = "unix:///var/run/containerd/containerd.sock"
	controlPlaneKey = "node-role.kubernetes.io/control-plane"
)

// kubeadm configuration, written here rather than imported: k8s.io/kubernetes/cmd/kubeadm is not
// a library. v1beta4 from Kubernetes 1.31 (v1beta3 is deprecated there), v1beta3 before.
type kubeadmMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type kubeadmArg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type kubeadmTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type nodeRegistration struct {
	CRISocket        string         `json:"criSocket"`
	KubeletExtraArgs any            `json:"kubeletExtraArgs,omitempty"`
	Taints           []kubeadmTaint `json:"taints"`
}

type bootstrapToken struct {
	Token  string   `json:"token"`
	TTL    string   `json:"ttl"`
	Usages []string `json:"usages"`
	Groups []string `json:"groups"`
}

type initConfiguration struct {
	kubeadmMeta
	BootstrapTokens  []bootstrapToken `json:"bootstrapTokens"`
	NodeRegistration nodeRegistration `json:"nodeRegistration"`
	CertificateKey   string           `json:"certificateKey,omitempty"`
}

type clusterConfiguration struct {
	kubeadmMeta
	KubernetesVersion    string            `json:"kubernetesVersion,omitempty"`
	ControlPlaneEndpoint string            `json:"controlPlaneEndpoint,omitempty"`
	Networking           map[string]string `json:"networking,omitempty"`
	ImageRepository      string            `json:"imageRepository,omitempty"`
	Etcd                 etcdConfiguration `json:"etcd"`
	APIServer            *apiServerConfig  `json:"apiServer,omitempty"`
}

// apiServerConfig is the API server's part of the ClusterConfiguration: the extra names of its
// certificate (apiname.go).
type apiServerConfig struct {
	CertSANs []string `json:"certSANs"`
}

// etcdConfiguration is stacked etcd: a member on every control-plane node, the data on its disk.
type etcdConfiguration struct {
	Local struct {
		DataDir string `json:"dataDir"`
	} `json:"local"`
}

type joinControlPlane struct {
	CertificateKey string `json:"certificateKey"`
}

type joinConfiguration struct {
	kubeadmMeta
	Discovery struct {
		BootstrapToken struct {
			APIServerEndpoint        string   `json:"apiServerEndpoint"`
			Token                    string   `json:"token"`
			CACertHashes             []string `json:"caCertHashes,omitempty"`
			UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification,omitempty"`
		} `json:"bootstrapToken"`
	} `json:"discovery"`
	NodeRegistration nodeRegistration  `json:"nodeRegistration"`
	ControlPlane     *joinControlPlane `json:"controlPlane,omitempty"`
	Patches          *kubeadmPatches   `json:"patches,omitempty"`
}

// kubeadmPatches is where kubeadm finds patches of what it writes (daytwo.go: the kubelet's).
type kubeadmPatches struct {
	Directory string `json:"directory"`
}

func (o Options) kubeadmAPIVersion() string {
	if o.Versions.k8sMinorNumber() >= 31 {
		return "kubeadm.k8s.io/v1beta4"
	}
	return "kubeadm.k8s.io/v1beta3"
}

// nodeRegistration registers exactly Kubernetes.Labels and Kubernetes.Taints (a control-plane
// node keeps kubeadm's control-plane taint too).
func (o Options) nodeRegistration() nodeRegistration {
	labels := o.Kubernetes.Labels
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	reg := nodeRegistration{CRISocket: criSocket, Taints: []kubeadmTaint{}}
	if o.kubeadmAPIVersion() == "kubeadm.k8s.io/v1beta4" {
		reg.KubeletExtraArgs = []kubeadmArg{{Name: "node-labels", Value: strings.Join(pairs, ",")}}
	} else {
		reg.KubeletExtraArgs = map[string]string{"node-labels": strings.Join(pairs, ",")}
	}
	if o.Role == RoleControlPlane {
		// An explicit taint list replaces kubeadm's default, so the control-plane taint is kept here.
		reg.Taints = append(reg.Taints, kubeadmTaint{Key: controlPlaneKey, Effect: "NoSchedule"})
	}
	for _, t := range o.Kubernetes.Taints {
		reg.Taints = append(reg.Taints, kubeadmTaint(t))
	}
	return reg
}

// initConfig is the first control-plane node's InitConfiguration, ClusterConfiguration and the
// cluster's KubeletConfiguration (daytwo.go).
func (o Options) initConfig() []any {
	apiVersion := o.kubeadmAPIVersion()
	cc := clusterConfiguration{kubeadmMeta: kubeadmMeta{apiVersion, "ClusterConfiguration"}, ControlPlaneEndpoint: o.controlPlaneEndpoint(),
		Networking: map[string]string{"podSubnet": o.podSubnet()}, ImageRepository: o.Kubernetes.ImageRegistry}
	if sans := o.certSANs(); len(sans) > 0 {
		cc.APIServer = &apiServerConfig{CertSANs: sans}
	}
	cc.Etcd.Local.DataDir = "/var/lib/etcd"
	// The exact release whose packages the node installs (versions.go, KubernetesReleases): a
	// label such as stable-1.33 would make kubeadm ask dl.k8s.io at boot.
	cc.KubernetesVersion = "v" + o.Versions.k8sRelease()
	return []any{initConfiguration{
		kubeadmMeta: kubeadmMeta{apiVersion, "InitConfiguration"},
		// The configured token is only the first: it lives in Terraform state, so it expires
		// after JoinTokenTTL, kubeadm's own default
		// (https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/). A node
		// that joins later needs a token the control plane keeps fresh (issue #31).
		BootstrapTokens: []bootstrapToken{{
			Token: o.Kubernetes.JoinToken, TTL: JoinTokenTTL,
			Usages: []string{"signing", "authentication"},
			Groups: []string{"system:bootstrappers:kubeadm:default-node-token"},
		}},
		NodeRegistration: o.nodeRegistration(),
		CertificateKey:   o.Kubernetes.CertificateKey,
	}, cc, kubeletConfig()}
}

// joinConfig is the JoinConfiguration of a worker or, with the certificate key, of a
// control-plane node. Discovery pins the CA unless the caller opted out.
func (o Options) joinConfig(controlPlane bool) joinConfiguration {
	j := joinConfiguration{kubeadmMeta: kubeadmMeta{o.kubeadmAPIVersion(), "JoinConfiguration"}, NodeRegistration: o.nodeRegistration()}
	bt := &j.Discovery.BootstrapToken
	bt.APIServerEndpoint = o.controlPlaneEndpoint()
	bt.Token = o.joinToken() // joinstore.go
	if o.Kubernetes.CACertHash != "" {
		bt.CACertHashes = []string{o.Kubernetes.CACertHash}
	} else {
		bt.UnsafeSkipCAVerification = true // only with InsecureSkipCAVerification (Validate)
	}
	if controlPlane {
		j.ControlPlane = &joinControlPlane{CertificateKey: o.Kubernetes.CertificateKey}
	}
	if o.kubeletPatches() {
		j.Patches = &kubeadmPatches{Directory: kubeletPatchDir}
	}
	return j
}

// kubeadmFiles are the kubeadm configuration files of the node, path -> YAML: KubeadmPath
// always; on the first node of a highly available control plane also KubeadmJoinPath, the
// control-plane join it uses when it replaces a lost first node.
func kubeadmFiles(o Options) (map[string]string, error) {
	var docs []any
	switch {
	case o.initNode():
		docs = o.initConfig()
	default:
		docs = []any{o.joinConfig(o.Role == RoleControlPlane)}
	}
	main, err := marshalDocs(docs)
	if err != nil {
		return nil, err
	}
	files := map[string]string{KubeadmPath: main}
	if o.highlyAvailable() {
		join, err := marshalDocs([]any{o.joinConfig(true)})
		if err != nil {
			return nil, err
		}
		files[KubeadmJoinPath] = join
	}
	return files, nil
}

func marshalDocs(docs []any) (string, error) {
	var parts []string
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return "", fmt.Errorf("encoding kubeadm configuration: %w", err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "---\n"), nil
}
