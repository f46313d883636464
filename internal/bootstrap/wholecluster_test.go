package bootstrap_test

// The Must-show of issue 17 on the rendered cloud-init of a whole cluster: a control plane of 3
// (a first pool of 1 and a joining pool of 2) and two GPU pools, built through the package's
// public surface only, as the node pool builds them.

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

const (
	lbEndpoint = "10.0.0.200:6443"
	joinToken  = "abcdef.0123456789abcdef"
	// apiName is the control plane's API server name (bootstrap.APIServerNameFor its load
	// balancer), the endpoint every kubeadm document names; lbEndpoint is what it maps to.
	apiName     = "api.lb-2ze7o5h8x9k1.gpucluster.internal"
	apiEndpoint = apiName + ":6443"
)

// pool is one node pool of the cluster: every node of a pool gets the same document.
type pool struct {
	name     string
	nodes    int
	identity bootstrap.NodeIdentity
	opts     bootstrap.Options
}

// decoded write_files and runcmd of a document, read back strictly.
type cloudDoc struct {
	WriteFiles []struct {
		Path, Permissions, Owner, Encoding, Content string
	} `json:"write_files"`
	RunCmd [][]string `json:"runcmd"`
}

func (d cloudDoc) file(t *testing.T, path string) string {
	t.Helper()
	for _, f := range d.WriteFiles {
		if f.Path != path {
			continue
		}
		if f.Encoding != "gz+b64" {
			return f.Content
		}
		raw, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return string(b)
	}
	t.Fatalf("no write_files entry for %s", path)
	return ""
}

func (d cloudDoc) has(path string) bool {
	return slices.ContainsFunc(d.WriteFiles, func(f struct{ Path, Permissions, Owner, Encoding, Content string }) bool { return f.Path == path })
}

// kubeadm documents as this test reads them (strictly: kubeadmcheck decodes them into kubeadm's
// own types).
type registration struct {
	CRISocket        string `json:"criSocket"`
	KubeletExtraArgs []struct {
		Name, Value string
	} `json:"kubeletExtraArgs"`
	Taints []bootstrap.Taint `json:"taints"`
}

type kubeadmDoc struct {
	APIVersion       string        `json:"apiVersion"`
	Kind             string        `json:"kind"`
	NodeRegistration *registration `json:"nodeRegistration"`
	CertificateKey   string        `json:"certificateKey"`
	BootstrapTokens  []any         `json:"bootstrapTokens"`
	// ClusterConfiguration
	KubernetesVersion    string            `json:"kubernetesVersion"`
	ControlPlaneEndpoint string            `json:"controlPlaneEndpoint"`
	Networking           map[string]string `json:"networking"`
	ImageRepository      string            `json:"imageRepository"`
	Etcd                 map[string]any    `json:"etcd"`
	APIServer            *struct {
		CertSANs []string `json:"certSANs"`
	} `json:"apiServer"`
	// JoinConfiguration
	Discovery *struct {
		BootstrapToken struct {
			APIServerEndpoint        string   `json:"apiServerEndpoint"`
			Token                    string   `json:"token"`
			CACertHashes             []string `json:"caCertHashes"`
			UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification"`
		} `json:"bootstrapToken"`
	} `json:"discovery"`
	ControlPlane *struct {
		CertificateKey string `json:"certificateKey"`
	} `json:"controlPlane"`
	Patches *struct {
		Directory string `json:"directory"`
	} `json:"patches"`
	// KubeletConfiguration
	RotateCertificates              *bool  `json:"rotateCertificates"`
	ShutdownGracePeriod             string `json:"shutdownGracePeriod"`
	ShutdownGracePeriodCriticalPods string `json:"shutdownGracePeriodCriticalPods"`
}

func kubeadmDocs(t *testing.T, stream string) []kubeadmDoc {
	t.Helper()
	var out []kubeadmDoc
	for _, part := range strings.Split(stream, "---\n") {
		var d kubeadmDoc
		if err := yaml.UnmarshalStrict([]byte(part), &d); err != nil {
			t.Fatalf("kubeadm document: %v\n%s", err, part)
		}
		out = append(out, d)
	}
	return out
}

// wholeCluster is the cluster of the Must-show, with a provider-made CA and the manifests of the
// monitoring and GPU add-ons on the first node, as cluster-core wires them.
func wholeCluster(t *testing.T) (pools []pool, caHash, certKey string) {
	t.Helper()
	m, err := clusterca.Generate(clusterca.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := clusterca.SelfSign(m.Key, 10*365*24*time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := m.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := clusterca.ParseCertPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	caHash, certKey = clusterca.CertHash(cert), m.CertificateKey
	// The whole add-on set cluster-core passes, validation jobs included: the largest user data.
	addons, err := manifests.AddonsYAML(manifests.Options{Scenario: catalog.ScenarioAITraining, Nodes: 5, GPUsPerNode: 8, ERDMA: true,
		HPA: &manifests.HPA{Deployment: "inference", MinReplicas: 1, MaxReplicas: 4}}, manifests.AddonOptions{Validation: true})
	if err != nil {
		t.Fatal(err)
	}
	// A mainland region with its defaults: every package from the in-VPC mirror, every image from
	// the region's in-VPC registry (the provider's default there): the largest user data.
	const region = "cn-wulanchabu"
	base := bootstrap.Kubernetes{APIEndpoint: lbEndpoint, APIServerName: apiName, JoinToken: joinToken, CACertHash: caHash,
		ImageRegistry: "registry-vpc." + region + ".aliyuncs.com/gpucluster"}
	cp := func(name string, nodes int, join bool) pool {
		id := bootstrap.NodeIdentity{Role: bootstrap.RoleControlPlane, Scenario: catalog.ScenarioAITraining, Pool: name}
		k := base
		k.JoinControlPlane, k.CertificateKey = join, certKey
		k.Labels, k.Taints = id.Labels(), id.Taints()
		if !join {
			k.PodSubnet = "10.244.0.0/16"
			k.CACertPEM, k.CAKeyPEM = certPEM, keyPEM
			k.Addons = addons
		}
		return pool{name, nodes, id, bootstrap.Options{Role: bootstrap.RoleControlPlane, Kubernetes: k, Region: region}}
	}
	gpu := func(name string, nodes int, product string, extra []bootstrap.Taint) pool {
		id := bootstrap.NodeIdentity{Role: bootstrap.RoleGPUWorker, Scenario: catalog.ScenarioAITraining, Pool: name, GPU: true, GPUProduct: product,
			UserLabels: map[string]string{"example.org/team": "nlp"}, UserTaints: extra}
		k := base
		k.Labels, k.Taints = id.Labels(), id.Taints()
		// ebmgn7ex and ebmgn8v, the ai_training picks, are NVSwitch types: Fabric Manager too.
		return pool{name, nodes, id, bootstrap.Options{Role: bootstrap.RoleGPUWorker, ERDMA: true, Kubernetes: k, Region: region, NVSwitch: true,
			Mounts: []string{"0a1b-xyz.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm nfs vers=3,nolock,proto=tcp,_netdev,nofail 0 0"}}}
	}
	return []pool{
		cp("cp", 1, false),
		cp("cp-join", 2, true),
		gpu("a100", 2, "A100-SXM4-80GB", nil),
		gpu("h800", 3, "H800", []bootstrap.Taint{{Key: "example.org/reserved", Value: "nlp", Effect: "NoExecute"}}),
	}, caHash, certKey
}

func render(t *testing.T, p pool) (string, cloudDoc) {
	t.Helper()
	doc, err := bootstrap.Render(p.opts)
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	var cd cloudDoc
	if err := yaml.UnmarshalStrict([]byte(doc), &cd); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	return doc, cd
}

// registered is what kubelet registers with, from a NodeRegistration: labels from node-labels,
// taints as written.
func registered(t *testing.T, r *registration) (map[string]string, []bootstrap.Taint) {
	t.Helper()
	labels := map[string]string{}
	for _, a := range r.KubeletExtraArgs {
		if a.Name != "node-labels" {
			continue
		}
		for _, kv := range strings.Split(a.Value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = v
		}
	}
	return labels, r.Taints
}

func TestRenderWholeCluster(t *testing.T) {
	pools, caHash, certKey := wholeCluster(t)
	inits := 0
	for _, p := range pools {
		doc, cd := render(t, p)
		// What the pool sends is the packed document; the limit is ECS's on what it is sent.
		packed := bootstrap.PackUserData(doc)
		if len(packed) > bootstrap.MaxUserDataBytes {
			t.Errorf("%s: user data is %d bytes gzip-compressed, over the ECS limit of %d", p.name, len(packed), bootstrap.MaxUserDataBytes)
		}
		t.Logf("%s: user data %d bytes, %d gzip-compressed (ECS limit %d)", p.name, len(doc), len(packed), bootstrap.MaxUserDataBytes)
		script := cd.file(t, bootstrap.ScriptPath)
		docs := kubeadmDocs(t, cd.file(t, bootstrap.KubeadmPath))
		if strings.Contains(script, "kubeadm init --config") {
			inits += p.nodes
		}
		var reg *registration
		switch docs[0].Kind {
		case "InitConfiguration":
			init, cluster := docs[0], docs[1]
			if cluster.ControlPlaneEndpoint != apiEndpoint || cluster.Networking["podSubnet"] != "10.244.0.0/16" || cluster.Etcd["local"] == nil {
				t.Errorf("%s: ClusterConfiguration %+v, want the API server name as controlPlaneEndpoint, the pod subnet, stacked etcd", p.name, cluster)
			}
			if cluster.APIServer == nil || !slices.Equal(cluster.APIServer.CertSANs, []string{apiName, "10.0.0.200"}) {
				t.Errorf("%s: the API server certificate does not name the name and the load balancer's address: %+v", p.name, cluster.APIServer)
			}
			if init.CertificateKey != certKey || !strings.Contains(script, "--upload-certs") {
				t.Errorf("%s: the first node must upload the certificates with the certificate key", p.name)
			}
			if cd.file(t, bootstrap.CACertPath) != p.opts.Kubernetes.CACertPEM || !cd.has(bootstrap.CAKeyPath) {
				t.Errorf("%s: the provider's CA is not written before kubeadm init", p.name)
			}
			// A replaced first node joins through the load balancer instead of a second init.
			rejoin := kubeadmDocs(t, cd.file(t, bootstrap.KubeadmJoinPath))[0]
			checkJoin(t, p.name+" (replacement)", rejoin, caHash)
			if rejoin.ControlPlane == nil || rejoin.ControlPlane.CertificateKey != certKey {
				t.Errorf("%s: the replacement join is not a control-plane join with the certificate key", p.name)
			}
			// The CNI manifest is applied: written to the add-ons directory the unit applies.
			cni := cd.file(t, bootstrap.AddonsDir+"/"+bootstrap.CNIAddonFile)
			// Flannel from the region's registry (the mainland default), pinned by digest.
			if !regexp.MustCompile(`registry-vpc\.cn-wulanchabu\.aliyuncs\.com/gpucluster/flannel:v[0-9.]+@sha256:`).MatchString(cni) ||
				!strings.Contains(cni, `"Network": "10.244.0.0/16"`) {
				t.Errorf("%s: the CNI manifest lacks the pinned Flannel image in the registry or the pod subnet", p.name)
			}
			if !strings.Contains(cd.file(t, bootstrap.AddonsScriptPath), "kubectl apply --server-side --force-conflicts --field-manager=gpucluster-addons -f "+bootstrap.AddonsDir+"/") ||
				!strings.Contains(script, "systemctl enable gpucluster-addons.service") {
				t.Errorf("%s: the add-ons (CNI included) are not applied by the enabled unit", p.name)
			}
			for name := range p.opts.Kubernetes.Addons {
				if cd.file(t, bootstrap.AddonsDir+"/"+name) != p.opts.Kubernetes.Addons[name] {
					t.Errorf("%s: add-on %s is not written as given", p.name, name)
				}
			}
			if !strings.Contains(cd.file(t, bootstrap.AddonsDir+"/"+manifests.AddonDevicePlugin), "nvidia-device-plugin") {
				t.Errorf("%s: the device plugin is not among the add-ons", p.name)
			}
			reg = init.NodeRegistration
		case "JoinConfiguration":
			j := docs[0]
			checkJoin(t, p.name, j, caHash)
			if p.opts.Role == bootstrap.RoleControlPlane && (j.ControlPlane == nil || j.ControlPlane.CertificateKey != certKey) {
				t.Errorf("%s: a control-plane join must carry the certificate key", p.name)
			}
			if p.opts.Role == bootstrap.RoleGPUWorker && j.ControlPlane != nil {
				t.Errorf("%s: a worker joins as a worker", p.name)
			}
			if strings.Contains(doc, bootstrap.AddonsDir) || strings.Contains(doc, bootstrap.CAKeyPath) {
				t.Errorf("%s: only the first node gets the CA key and the add-ons", p.name)
			}
			reg = j.NodeRegistration
		default:
			t.Fatalf("%s: first kubeadm document is %s", p.name, docs[0].Kind)
		}
		labels, taints := registered(t, reg)
		if want := p.identity.Labels(); !maps.Equal(labels, want) {
			t.Errorf("%s: kubelet registers labels %v, the pool reports %v", p.name, labels, want)
		}
		want := p.identity.Taints()
		if p.opts.Role == bootstrap.RoleControlPlane {
			want = append([]bootstrap.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: "NoSchedule"}}, want...)
		}
		if !slices.Equal(taints, want) {
			t.Errorf("%s: kubelet registers taints %v, the pool reports %v", p.name, taints, want)
		}
		if p.opts.Role == bootstrap.RoleGPUWorker && (labels[bootstrap.GPUPresentLabel] != "true" || labels[bootstrap.GPUProductLabel] == "" || taints[0] != bootstrap.GPUTaint()) {
			t.Errorf("%s: a GPU node lacks nvidia.com/gpu.present, nvidia.com/gpu.product or the nvidia.com/gpu:NoSchedule taint: %v %v", p.name, labels, taints)
		}
	}
	if inits != 1 {
		t.Fatalf("%d nodes run kubeadm init, want exactly 1", inits)
	}
}

func checkJoin(t *testing.T, name string, j kubeadmDoc, caHash string) {
	t.Helper()
	bt := j.Discovery.BootstrapToken
	if bt.APIServerEndpoint != apiEndpoint || !slices.Equal(bt.CACertHashes, []string{caHash}) || bt.UnsafeSkipCAVerification {
		b, _ := json.Marshal(bt)
		t.Errorf("%s: discovery %s, want the API server name %s with the CA hash pinned", name, b, apiEndpoint)
	}
}

// TestRenderWholeClusterCloudInitSchema hands every document of the cluster to cloud-init.
func TestRenderWholeClusterCloudInitSchema(t *testing.T) {
	ci := testtools.Require(t, "cloud-init", "cloud-init")
	pools, _, _ := wholeCluster(t)
	for _, p := range pools {
		doc, _ := render(t, p)
		path := filepath.Join(t.TempDir(), p.name+".yaml")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(ci, "schema", "--config-file", path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Valid cloud-config") {
			t.Errorf("%s: cloud-init schema: %v\n%s", p.name, err, out)
		}
	}
}

// kubeadmTestdata is where tools/kubeadmcheck reads the rendered kubeadm documents from.
const kubeadmTestdata = "../../tools/kubeadmcheck/testdata"

// TestKubeadmTestdataCurrent keeps tools/kubeadmcheck's copies of the rendered kubeadm documents
// equal to what the package renders: a change here that kubeadm's own types would refuse fails
// there. Kubernetes 1.33, so v1beta4: the kubeadm release kubeadmcheck builds against (1.37) no
// longer has v1beta3, which nodes before 1.31 get. UPDATE_KUBEADM_TESTDATA=1 rewrites them.
func TestKubeadmTestdataCurrent(t *testing.T) {
	pools, _, _ := wholeCluster(t)
	files := map[string]string{}
	for _, version := range []string{"1.33.2"} {
		for _, p := range pools {
			p.opts.Versions.Kubernetes = version
			_, cd := render(t, p)
			files[p.name+"-"+version+".yaml"] = redact(cd.file(t, bootstrap.KubeadmPath))
			if cd.has(bootstrap.KubeadmJoinPath) {
				files[p.name+"-rejoin-"+version+".yaml"] = redact(cd.file(t, bootstrap.KubeadmJoinPath))
			}
			if cd.has(bootstrap.KubeletPatchPath) {
				files[p.name+"-kubelet-patch-"+version+".yaml"] = cd.file(t, bootstrap.KubeletPatchPath)
			}
		}
	}
	if os.Getenv("UPDATE_KUBEADM_TESTDATA") == "1" {
		if err := os.MkdirAll(kubeadmTestdata, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(kubeadmTestdata, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for name, content := range files {
		have, err := os.ReadFile(filepath.Join(kubeadmTestdata, name))
		if err != nil || string(have) != content {
			t.Errorf("%s/%s is not what the package renders (%v): run UPDATE_KUBEADM_TESTDATA=1 go test ./internal/bootstrap -run TestKubeadmTestdataCurrent", kubeadmTestdata, name, err)
		}
	}
}

// redact replaces the per-run CA hash and certificate key with fixed values of the same shape, so
// the testdata is stable.
func redact(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		switch {
		case strings.Contains(l, "certificateKey:"):
			lines[i] = l[:strings.Index(l, "certificateKey:")] + "certificateKey: " + strings.Repeat("0", 64)
		case strings.HasPrefix(strings.TrimSpace(l), "- sha256:"):
			lines[i] = l[:strings.Index(l, "- sha256:")] + "- sha256:" + strings.Repeat("1", 64)
		}
	}
	return strings.Join(lines, "\n")
}

// TestRenderWholeClusterBashSyntax hands every script of the cluster (bootstrap, add-ons, certificates) to
// bash -n.
func TestRenderWholeClusterBashSyntax(t *testing.T) {
	bash := testtools.Require(t, "bash", "bash")
	pools, _, _ := wholeCluster(t)
	for _, p := range pools {
		_, cd := render(t, p)
		scripts := []string{bootstrap.ScriptPath, bootstrap.APIHostsPath, bootstrap.CertsScriptPath}
		if cd.has(bootstrap.AddonsScriptPath) {
			scripts = append(scripts, bootstrap.AddonsScriptPath)
		}
		for _, s := range scripts {
			path := filepath.Join(t.TempDir(), filepath.Base(s))
			if err := os.WriteFile(path, []byte(cd.file(t, s)), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s %s: bash -n: %v\n%s", p.name, s, err, out)
			}
		}
	}
}
