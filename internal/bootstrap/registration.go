package bootstrap

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// What a node's kubeadm does with its configuration.
const (
	KubeadmInit             = "init"
	KubeadmJoin             = "join"
	KubeadmJoinControlPlane = "join_control_plane"
)

// Registration is what a node rendered by Render does when it boots, read back from its user
// data: the inverse of Render for the parts Kubernetes sees. It lets a reader (the node
// registration data source, the emulator's node agent, tests) check what a running instance will
// register as from the document ECS holds, not from what the provider meant to write.
type Registration struct {
	// Action is KubeadmInit, KubeadmJoin or KubeadmJoinControlPlane.
	Action string
	// APIEndpoint is the init node's controlPlaneEndpoint or a joining node's apiServerEndpoint.
	APIEndpoint string
	// Token is the bootstrap token the init node creates or a joining node presents. Secret.
	Token string
	// CACertHashes pin the cluster CA for a joining node; empty when it skips verification.
	CACertHashes []string
	// SkipsCAVerification is kubeadm's unsafeSkipCAVerification.
	SkipsCAVerification bool
	// Labels and Taints are what kubelet registers the node with (kubeadm's nodeRegistration).
	Labels map[string]string
	Taints []Taint
	// PodSubnet is the init node's networking.podSubnet.
	PodSubnet string
	// Files are the files cloud-init writes, path -> content (decoded when Base64 or gzip+Base64).
	Files map[string]string
}

// TaintStrings are Taints in the key=value:Effect form node_taints uses, in registration order.
func (r Registration) TaintStrings() []string {
	out := make([]string, 0, len(r.Taints))
	for _, t := range r.Taints {
		out = append(out, t.String())
	}
	return out
}

// ParseRegistration reads a user data document (not Base64; packed by PackUserData or plain) that
// Render wrote, alone or merged with the user's own parts by Merge (ours is the first cloud-config
// part).
func ParseRegistration(userData string) (Registration, error) {
	files, err := DocumentFiles(userData)
	if err != nil {
		return Registration{}, err
	}
	return RegistrationOfFiles(files)
}

// RegistrationOfFiles is ParseRegistration of the files a node's bootstrap writes, path ->
// content: DocumentFiles of its user data, or with a bootstrap bundle the bundle's files.
func RegistrationOfFiles(files map[string]string) (Registration, error) {
	reg := Registration{Files: files}
	kubeadm, ok := reg.Files[KubeadmPath]
	if !ok {
		return Registration{}, fmt.Errorf("the user data writes no %s: it was not rendered by the node bootstrap", KubeadmPath)
	}
	if err := reg.readKubeadm(kubeadm); err != nil {
		return Registration{}, fmt.Errorf("%s: %w", KubeadmPath, err)
	}
	return reg, nil
}

// DocumentFiles are the files the bootstrap's cloud-config writes (alone or merged by Merge),
// path -> content, decoded: the script is written gzip-compressed.
func DocumentFiles(userData string) (map[string]string, error) {
	cc, err := readCloudConfig(userData)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, f := range cc.WriteFiles {
		content, err := fileContent(f)
		if err != nil {
			return nil, fmt.Errorf("write_files %s: %w", f.Path, err)
		}
		files[f.Path] = content
	}
	return files, nil
}

// RunCommands are the runcmd entries of the bootstrap's cloud-config (ourCloudConfig), each as
// its argv: where a bootstrap bundle's stub names its bundle (internal/bundle SpecOfCommand).
func RunCommands(userData string) ([][]string, error) {
	cc, err := readCloudConfig(userData)
	return cc.RunCmd, err
}

// readCloudConfig reads the bootstrap's cloud-config from user data as ECS holds it (packed or
// not, alone or merged by Merge).
func readCloudConfig(userData string) (cloudConfig, error) {
	var cc cloudConfig
	userData, err := UnpackUserData(userData)
	if err != nil {
		return cc, err
	}
	doc, err := ourCloudConfig(userData)
	if err != nil {
		return cc, err
	}
	if err := yaml.Unmarshal([]byte(doc), &cc); err != nil {
		return cc, fmt.Errorf("the user data's cloud-config is not YAML: %w", err)
	}
	return cc, nil
}

// ourCloudConfig is the bootstrap's cloud-config: the document itself, or the first cloud-config
// part of a multipart document.
func ourCloudConfig(userData string) (string, error) {
	if !isMIME(userData) {
		return userData, nil
	}
	parts, err := readMIME(userData)
	if err != nil {
		return "", fmt.Errorf("the user data is MIME multipart but cannot be read: %w", err)
	}
	for _, p := range parts {
		if p.ctype == "text/cloud-config" {
			return p.body, nil
		}
	}
	return "", fmt.Errorf("the multipart user data has no cloud-config part")
}

func fileContent(f writeFile) (string, error) {
	switch f.Encoding {
	case "":
		return f.Content, nil
	case "b64", "base64":
		b, err := base64.StdEncoding.DecodeString(f.Content)
		return string(b), err
	case "gz+b64", "gzip+base64":
		return gunzipBase64(f.Content)
	default:
		return "", fmt.Errorf("encoding %q is not one the bootstrap writes", f.Encoding)
	}
}

// kubeadmDocument holds the fields of every kubeadm kind the bootstrap writes; Kind says which
// apply. Read leniently: tools/kubeadmcheck holds the rendered documents to kubeadm's own types.
type kubeadmDocument struct {
	Kind             string           `json:"kind"`
	BootstrapTokens  []bootstrapToken `json:"bootstrapTokens"`
	NodeRegistration struct {
		KubeletExtraArgs []kubeadmArg   `json:"kubeletExtraArgs"`
		Taints           []kubeadmTaint `json:"taints"`
	} `json:"nodeRegistration"`
	ControlPlaneEndpoint string            `json:"controlPlaneEndpoint"`
	Networking           map[string]string `json:"networking"`
	Discovery            struct {
		BootstrapToken struct {
			APIServerEndpoint        string   `json:"apiServerEndpoint"`
			Token                    string   `json:"token"`
			CACertHashes             []string `json:"caCertHashes"`
			UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification"`
		} `json:"bootstrapToken"`
	} `json:"discovery"`
	ControlPlane *joinControlPlane `json:"controlPlane"`
}

func (r *Registration) readKubeadm(content string) error {
	var seen []string
	for _, raw := range strings.Split(content, "\n---\n") {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		var d kubeadmDocument
		if err := yaml.Unmarshal([]byte(raw), &d); err != nil {
			return err
		}
		seen = append(seen, d.Kind)
		switch d.Kind {
		case "InitConfiguration":
			r.Action = KubeadmInit
			if len(d.BootstrapTokens) > 0 {
				r.Token = d.BootstrapTokens[0].Token
			}
			r.readNodeRegistration(d)
		case "JoinConfiguration":
			r.Action = KubeadmJoin
			if d.ControlPlane != nil {
				r.Action = KubeadmJoinControlPlane
			}
			bt := d.Discovery.BootstrapToken
			r.APIEndpoint, r.Token = bt.APIServerEndpoint, bt.Token
			r.CACertHashes, r.SkipsCAVerification = bt.CACertHashes, bt.UnsafeSkipCAVerification
			r.readNodeRegistration(d)
		case "ClusterConfiguration":
			r.APIEndpoint = d.ControlPlaneEndpoint
			r.PodSubnet = d.Networking["podSubnet"]
		}
	}
	if r.Action == "" {
		return fmt.Errorf("no InitConfiguration or JoinConfiguration (kinds: %v)", seen)
	}
	return nil
}

func (r *Registration) readNodeRegistration(d kubeadmDocument) {
	r.Labels = map[string]string{}
	for _, a := range d.NodeRegistration.KubeletExtraArgs {
		if a.Name != "node-labels" {
			continue
		}
		for _, kv := range strings.Split(a.Value, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				r.Labels[k] = v
			}
		}
	}
	for _, t := range d.NodeRegistration.Taints {
		r.Taints = append(r.Taints, Taint(t))
	}
}

// LabelKeys are the registration's label keys, sorted (for messages).
func (r Registration) LabelKeys() []string { return slices.Sorted(maps.Keys(r.Labels)) }
