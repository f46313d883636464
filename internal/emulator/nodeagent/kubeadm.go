package nodeagent

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The kubeadm configuration documents a node's user data writes (kubeadm.k8s.io v1beta3 and
// v1beta4), read as kubeadm reads them: only the fields that decide what the node joins and how
// it registers. Written here, not imported: k8s.io/kubernetes/cmd/kubeadm is not a library, and
// reading the YAML independently of internal/bootstrap's writer is what catches a field that
// writer misspells.

type kubeadmDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type kubeadmNodeRegistration struct {
	Name             string          `json:"name"`
	KubeletExtraArgs json.RawMessage `json:"kubeletExtraArgs"`
	Taints           []corev1.Taint  `json:"taints"`
}

type kubeadmInit struct {
	BootstrapTokens []struct {
		Token string `json:"token"`
		TTL   string `json:"ttl"`
	} `json:"bootstrapTokens"`
	NodeRegistration kubeadmNodeRegistration `json:"nodeRegistration"`
	CertificateKey   string                  `json:"certificateKey"`
}

type kubeadmCluster struct {
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint"`
	ImageRepository      string `json:"imageRepository"`
	KubernetesVersion    string `json:"kubernetesVersion"`
	Networking           struct {
		PodSubnet string `json:"podSubnet"`
	} `json:"networking"`
	APIServer struct {
		CertSANs []string `json:"certSANs"`
	} `json:"apiServer"`
}

type kubeadmJoin struct {
	Discovery struct {
		BootstrapToken struct {
			APIServerEndpoint        string   `json:"apiServerEndpoint"`
			Token                    string   `json:"token"`
			CACertHashes             []string `json:"caCertHashes"`
			UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification"`
		} `json:"bootstrapToken"`
	} `json:"discovery"`
	NodeRegistration kubeadmNodeRegistration `json:"nodeRegistration"`
	ControlPlane     *struct {
		CertificateKey string `json:"certificateKey"`
	} `json:"controlPlane"`
}

// kubeadmConfig is one kubeadm configuration file: InitConfiguration with ClusterConfiguration,
// or JoinConfiguration.
type kubeadmConfig struct {
	Init    *kubeadmInit
	Cluster *kubeadmCluster
	Join    *kubeadmJoin
}

func parseKubeadm(content string) (kubeadmConfig, error) {
	var c kubeadmConfig
	for _, doc := range splitYAML(content) {
		var meta kubeadmDoc
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return c, fmt.Errorf("kubeadm configuration is not YAML: %w", err)
		}
		if !strings.HasPrefix(meta.APIVersion, "kubeadm.k8s.io/") {
			continue
		}
		var err error
		switch meta.Kind {
		case "InitConfiguration":
			c.Init = &kubeadmInit{}
			err = yaml.Unmarshal([]byte(doc), c.Init)
		case "ClusterConfiguration":
			c.Cluster = &kubeadmCluster{}
			err = yaml.Unmarshal([]byte(doc), c.Cluster)
		case "JoinConfiguration":
			c.Join = &kubeadmJoin{}
			err = yaml.Unmarshal([]byte(doc), c.Join)
		}
		if err != nil {
			return c, fmt.Errorf("kubeadm %s: %w", meta.Kind, err)
		}
	}
	if c.Init == nil && c.Join == nil {
		return c, fmt.Errorf("kubeadm configuration has neither an InitConfiguration nor a JoinConfiguration")
	}
	return c, nil
}

// splitYAML splits a multi-document YAML stream at its "---" lines.
func splitYAML(s string) []string {
	var docs []string
	var cur strings.Builder
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			docs = append(docs, cur.String())
		}
		cur.Reset()
	}
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.TrimRight(line, " \r\n") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return docs
}

// nodeLabels reads kubelet's --node-labels from kubeletExtraArgs: a list of {name, value} in
// v1beta4, a map in v1beta3.
func (r kubeadmNodeRegistration) nodeLabels() (map[string]string, error) {
	labels := map[string]string{}
	if len(r.KubeletExtraArgs) == 0 || string(r.KubeletExtraArgs) == "null" {
		return labels, nil
	}
	var value string
	var list []struct{ Name, Value string }
	var m map[string]string
	switch {
	case json.Unmarshal(r.KubeletExtraArgs, &list) == nil:
		for _, a := range list {
			if a.Name == "node-labels" {
				value = a.Value
			}
		}
	case json.Unmarshal(r.KubeletExtraArgs, &m) == nil:
		value = m["node-labels"]
	default:
		return nil, fmt.Errorf("kubeletExtraArgs is neither a list of name/value pairs nor a map")
	}
	for _, pair := range strings.Split(value, ",") {
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("node-labels entry %q is not key=value", pair)
		}
		labels[k] = v
	}
	return labels, nil
}
