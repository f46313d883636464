package bootstrap

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Node roles.
const (
	RoleControlPlane = "control_plane"
	RoleGPUWorker    = "gpu_worker"
)

// Roles lists the roles, for validators and docs.
func Roles() []string { return []string{RoleControlPlane, RoleGPUWorker} }

// Labels and taints every GPU worker carries; the Kubernetes manifests select and tolerate them.
const (
	// NodeRoleLabel is set on every node the module creates, value RoleLabelValue(role).
	NodeRoleLabel = "gpucluster.io/node-role"
	// GPUTaintKey is the taint that keeps non-GPU pods off GPU nodes; the NVIDIA device plugin
	// uses the same key as its extended resource, which is the ecosystem's convention.
	GPUTaintKey = "nvidia.com/gpu"
	// GPUTaintEffect is the GPU taint's effect.
	GPUTaintEffect = "NoSchedule"
)

// RoleLabelValue is the NodeRoleLabel value of a role ("gpu-worker"): label values allow '_',
// but the hyphen reads like every other Kubernetes label.
func RoleLabelValue(role string) string { return strings.ReplaceAll(role, "_", "-") }

// TaintEffects are the effects Kubernetes accepts.
func TaintEffects() []string { return []string{"NoSchedule", "PreferNoSchedule", "NoExecute"} }

// Taint is a node taint.
type Taint struct {
	Key, Value, Effect string
}

// Kubernetes is what a node needs to create or join the cluster.
type Kubernetes struct {
	// APIEndpoint is host:port of the API server (control plane: its controlPlaneEndpoint,
	// optional; worker: required).
	APIEndpoint string
	// APIServerName is the DNS name the API is reached by instead (apiname.go):
	// controlPlaneEndpoint and every join's apiServerEndpoint are the name with APIEndpoint's
	// port, and APIEndpoint's host, which must then be an IPv4 address (the control plane's load
	// balancer), is what the node maps the name to in /etc/hosts until it serves the API itself.
	// The API server certificate names both. Give every node of the cluster the same name.
	APIServerName string
	// JoinToken is a kubeadm bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}. Secret.
	JoinToken string
	// CACertHash pins the cluster CA for every joining node ("sha256:<hex>"). Empty is an error
	// on a joining node unless InsecureSkipCAVerification is set.
	CACertHash string
	// InsecureSkipCAVerification lets joining nodes trust whichever server answers at
	// APIEndpoint (kubeadm's unsafeSkipCAVerification). An explicit opt-in; Validate warns.
	InsecureSkipCAVerification bool
	// PodSubnet is the control plane's pod network CIDR; the first control-plane node gives it
	// to kubeadm and to the CNI. Default DefaultPodSubnet.
	PodSubnet string
	// JoinControlPlane makes a control-plane node join the existing control plane (kubeadm join
	// --control-plane, stacked etcd) instead of creating it; false is the first node, which runs
	// kubeadm init.
	JoinControlPlane bool
	// CertificateKey is kubeadm's key for the control-plane certificates the first node uploads
	// (64 hex digits). Secret. With it the first node runs kubeadm init --upload-certs and the
	// other control-plane nodes download the certificates when they join.
	CertificateKey string
	// CACertPEM and CAKeyPEM are the cluster CA the first control-plane node's kubeadm uses
	// instead of making its own, so its hash is known before any node boots. CAKeyPEM is
	// secret. First control-plane node only.
	CACertPEM, CAKeyPEM string
	// Addons are manifests (file name -> YAML) the first control-plane node applies once the API
	// answers, and again on every boot (server-side apply: idempotent).
	Addons map[string]string
	// ImageRegistry is where the node takes every container image from (internal/images
	// registry.go): kubeadm's imageRepository on the first control-plane node, containerd's
	// sandbox image and registry hosts on every node, the CNI's images. "" is the upstream
	// registries. Give every node of a cluster the same value, and the manifests too.
	ImageRegistry string
	// Labels and Taints are exactly what the node registers with: compute them with
	// NodeIdentity so the node pool reports what kubelet applies.
	Labels map[string]string
	Taints []Taint
	// JoinStore keeps a valid join token in OSS for nodes that join later (joinstore.go); nil:
	// the node joins with JoinToken, valid for JoinTokenTTL after kubeadm init.
	JoinStore *JoinStore
	// EtcdBackup stores etcd snapshots in OSS on a timer (control-plane nodes,
	// etcdsnapshot.go); nil: none.
	EtcdBackup *EtcdBackup
	// ControlPlaneSize is the control plane's intended number of nodes (1, 3, 5 or 7; 0: not
	// given). With it every control-plane node of a highly available control plane uploads the
	// certificates only while fewer control-plane Nodes are Ready (uploadcerts.go).
	ControlPlaneSize int
}

// Options describe one node role.
type Options struct {
	Role       string
	Versions   Versions
	Kubernetes Kubernetes
	// Mounts are /etc/fstab lines (from the storage tiers): spec, mount point, type, options
	// [, dump, pass].
	Mounts []string
	// ERDMA installs the eRDMA driver (GPU instances with HighPerformance ENIs).
	ERDMA bool
	// NCCLEnv overrides netplan.NCCLEnv(ERDMA) per variable. Workers only.
	NCCLEnv map[string]string
	// PackageMirror is where apt and pip look: MirrorInternet or MirrorAlibabaVPC; "" is the
	// region's default (DefaultPackageMirror).
	PackageMirror string
	// Region is the region the node runs in, such as cn-wulanchabu: it picks the default
	// PackageMirror.
	Region string
	// NVSwitch installs and starts NVIDIA Fabric Manager, at the driver's exact version, before
	// the node joins: the instance type's GPUs are connected by NVSwitches
	// (catalog.InstanceType.NVSwitch). GPU workers only.
	NVSwitch bool
	// HostCUDA installs the CUDA toolkit (Versions.CUDA) and NCCL on the host from NVIDIA's
	// repository (developer.download.nvidia.com, gigabytes). Off by default: Kubernetes workloads
	// bring CUDA and NCCL in their container images and need only the driver from the host.
	HostCUDA bool
	// ProviderID registers a worker with spec.providerID <region>.<instance id> from the instance
	// metadata: the Cluster Autoscaler's alicloud provider finds a node's scaling group by it.
	// Set for autoscaling pools (fixed pools keep their user data, so upgrading rolls none).
	ProviderID bool
	// SpotInterruptionHandler installs the service that cordons and drains a worker when its spot
	// reclaim is announced (spot.go). Set for pools that launch spot instances.
	SpotInterruptionHandler bool
}

var (
	tokenRE      = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	caHashRE     = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	endpointRE   = regexp.MustCompile(`^[A-Za-z0-9.\-]+:[0-9]{1,5}$`)
	envNameRE    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
	safeFieldRE  = regexp.MustCompile(`^[A-Za-z0-9_./:,=@+\-\[\]]+$`)
	mountPointRE = regexp.MustCompile(`^/[A-Za-z0-9_./\-]*$`)
)

// kubeletAllowedLabel reports whether kubelet may set a label on its own node: the
// NodeRestriction admission plugin forbids kubernetes.io and k8s.io keys except these.
func kubeletAllowedLabel(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return true
	}
	if !(prefix == "kubernetes.io" || prefix == "k8s.io" || strings.HasSuffix(prefix, ".kubernetes.io") || strings.HasSuffix(prefix, ".k8s.io")) {
		return true
	}
	if prefix == "kubelet.kubernetes.io" || prefix == "node.kubernetes.io" ||
		strings.HasSuffix(prefix, ".kubelet.kubernetes.io") || strings.HasSuffix(prefix, ".node.kubernetes.io") {
		return true
	}
	return slices.Contains([]string{
		"kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os",
		"beta.kubernetes.io/instance-type", "beta.kubernetes.io/arch", "beta.kubernetes.io/os",
		"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
		"topology.kubernetes.io/zone", "topology.kubernetes.io/region",
	}, key)
}

// Mount is one parsed fstab line.
type Mount struct {
	Spec, Path, Type, Options, Dump, Pass string
}

// ParseMount reads an fstab line.
func ParseMount(line string) (Mount, error) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f) > 6 {
		return Mount{}, fmt.Errorf("has %d fields, want 4 to 6 (spec, mount point, type, options[, dump, pass])", len(f))
	}
	for _, x := range f {
		if !safeFieldRE.MatchString(x) {
			return Mount{}, fmt.Errorf("field %q has characters fstab or the shell would misread", x)
		}
	}
	m := Mount{Spec: f[0], Path: f[1], Type: f[2], Options: f[3], Dump: "0", Pass: "0"}
	if len(f) > 4 {
		m.Dump = f[4]
	}
	if len(f) > 5 {
		m.Pass = f[5]
	}
	if !mountPointRE.MatchString(m.Path) || m.Path == "/" || strings.Contains(m.Path, "..") {
		return Mount{}, fmt.Errorf("mount point %q is not an absolute path below /", m.Path)
	}
	return m, nil
}

// Line is the fstab line, normalised to six fields.
func (m Mount) Line() string {
	return strings.Join([]string{m.Spec, m.Path, m.Type, m.Options, m.Dump, m.Pass}, " ")
}

func (m Mount) isNFS() bool { return strings.HasPrefix(m.Type, "nfs") }

// ResolvedNCCLEnv is netplan's NCCL environment for the eRDMA setting, overridden by extra.
func ResolvedNCCLEnv(erdma bool, extra map[string]string) map[string]string {
	env := netplan.NCCLEnv(erdma)
	maps.Copy(env, extra)
	return env
}

// Validate checks the options (versions with defaults) and returns warnings for what works
// with limits. Errors are *planerr.Error, their Path an Options field in planerr's syntax (role, kubernetes.join_token, mounts[2], versions.driver, ...).
func Validate(o Options) (warnings []string, err error) {
	if !slices.Contains(Roles(), o.Role) {
		return nil, planerr.Input("role", o.Role, "is not a node role", "use one of "+strings.Join(Roles(), ", "))
	}
	if warnings, err = o.Versions.Check(); err != nil {
		if pe, ok := planerr.As(err); ok {
			return nil, pe.Under("versions")
		}
		return nil, err
	}
	if err := checkPackageMirror(o.PackageMirror); err != nil {
		return nil, err
	}
	k := o.Kubernetes
	if !tokenRE.MatchString(k.JoinToken) {
		return nil, planerr.Input("kubernetes.join_token", "", "is not a kubeadm bootstrap token ([a-z0-9]{6}.[a-z0-9]{16})",
			"generate one with `kubeadm token generate`, or in Terraform from two random_string resources (lower, numeric, no special) of 6 and 16 characters joined by a dot")
	}
	if err := images.CheckRegistry("kubernetes.image_registry", k.ImageRegistry); err != nil {
		return nil, err
	}
	if err := validateControlPlaneSize(o); err != nil {
		return nil, err
	}
	if err := validateJoinStore(o); err != nil {
		return nil, err
	}
	if err := validateEtcdBackup(o); err != nil {
		return nil, err
	}
	if k.APIEndpoint != "" && !endpointRE.MatchString(k.APIEndpoint) {
		return nil, planerr.Input("kubernetes.api_endpoint", k.APIEndpoint, "is not host:port", "give the API server address and port, such as 10.0.0.10:6443")
	}
	if o.Role == RoleGPUWorker && k.APIEndpoint == "" {
		return nil, planerr.Input("kubernetes.api_endpoint", "", "is required for gpu_worker nodes", "pass the control plane's address and port, such as 10.0.0.10:6443")
	}
	if k.CACertHash != "" && !caHashRE.MatchString(k.CACertHash) {
		return nil, planerr.Input("kubernetes.ca_cert_hash", k.CACertHash, "is not sha256:<64 hex digits>", "use the hash `kubeadm token create --print-join-command` prints")
	}
	if err := validateAPIServerName(o); err != nil {
		return nil, err
	}
	if w, err := validateControlPlane(o); err != nil {
		return nil, err
	} else if w != "" {
		warnings = append(warnings, w)
	}
	if k.PodSubnet != "" {
		if _, perr := netplan.ParseIPv4CIDR(k.PodSubnet); perr != nil {
			return nil, planerr.Input("kubernetes.pod_subnet", k.PodSubnet, "is not an IPv4 CIDR", "use a private block the VPC does not use, such as 10.244.0.0/16")
		}
	}
	for _, key := range slices.Sorted(maps.Keys(k.Labels)) {
		field := planerr.Key("kubernetes.labels", key)
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, planerr.Input(field, key, "is not a valid label key: "+strings.Join(errs, "; "), "use prefix/name such as example.org/team")
		}
		if errs := validation.IsValidLabelValue(k.Labels[key]); len(errs) > 0 {
			return nil, planerr.Input(field, k.Labels[key], "is not a valid label value: "+strings.Join(errs, "; "), "use at most 63 characters of [A-Za-z0-9_.-]")
		}
		if !kubeletAllowedLabel(key) {
			return nil, planerr.Input(field, key, "is in the kubernetes.io / k8s.io namespace, which the NodeRestriction admission plugin forbids a kubelet to set on its own node",
				"use your own prefix (such as gpucluster.io/"+key[strings.LastIndex(key, "/")+1:]+") or a node.kubernetes.io/ key")
		}
	}
	for i, t := range k.Taints {
		field := planerr.Index("kubernetes.taints", i)
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return nil, planerr.Input(planerr.Join(field, "key"), t.Key, "is not a valid taint key: "+strings.Join(errs, "; "), "use prefix/name such as nvidia.com/gpu")
		}
		if t.Value != "" {
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return nil, planerr.Input(planerr.Join(field, "value"), t.Value, "is not a valid taint value: "+strings.Join(errs, "; "), "use at most 63 characters of [A-Za-z0-9_.-]")
			}
		}
		if !slices.Contains(TaintEffects(), t.Effect) {
			return nil, planerr.Input(planerr.Join(field, "effect"), t.Effect, "is not a taint effect", "use one of "+strings.Join(TaintEffects(), ", "))
		}
	}
	for i, line := range o.Mounts {
		if _, perr := ParseMount(line); perr != nil {
			return nil, planerr.Input(planerr.Index("mounts", i), line, perr.Error(), "write an fstab line, such as `xxx.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm nfs vers=3,nolock,proto=tcp,_netdev,nofail 0 0`")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.NCCLEnv)) {
		if !envNameRE.MatchString(name) {
			return nil, planerr.Input(planerr.Key("nccl_env", name), name, "is not an environment variable name", "use upper case letters, digits and _, such as NCCL_DEBUG")
		}
		if v := o.NCCLEnv[name]; strings.ContainsAny(v, "\n\r\x00\"'`$\\") {
			return nil, planerr.Input(planerr.Key("nccl_env", name), v, "contains a newline, quote, backslash or $", "give a plain value such as INFO or eth0")
		}
	}
	if err := validateAddons(o); err != nil {
		return nil, err
	}
	if o.Role == RoleControlPlane && len(o.NCCLEnv) > 0 {
		warnings = append(warnings, "nccl_env is ignored for control_plane nodes: they run no GPU workloads")
	}
	if o.Role == RoleControlPlane && (o.NVSwitch || o.HostCUDA) {
		warnings = append(warnings, "nvswitch and host_cuda are ignored for control_plane nodes: they install no NVIDIA software")
	}
	return warnings, nil
}

// cloudConfig is the subset of cloud-config this package writes.
type cloudConfig struct {
	WriteFiles []writeFile `json:"write_files"`
	RunCmd     [][]string  `json:"runcmd"`
}

// CloudConfig and WriteFile are the document's shape for a package that reads it back and
// writes its own (internal/bundle: the bundle's files and the stub), so both stay one shape.
type (
	CloudConfig = cloudConfig
	WriteFile   = writeFile
)

type writeFile struct {
	Path        string `json:"path"`
	Permissions string `json:"permissions,omitempty"`
	Owner       string `json:"owner,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	Content     string `json:"content"`
}

// File paths the document writes.
const (
	ScriptPath      = "/usr/local/sbin/gpucluster-bootstrap.sh"
	KubeadmPath     = "/etc/gpucluster/kubeadm.yaml"
	NCCLConfPath    = "/etc/nccl.conf"
	NCCLProfilePath = "/etc/profile.d/gpucluster-nccl.sh"
)

// Render returns the #cloud-config document for a node. The join token appears only in the
// kubeadm configuration file (mode 0600), never on a command line or in the log.
func Render(o Options) (string, error) {
	if _, err := Validate(o); err != nil {
		return "", err
	}
	o.Versions = o.Versions.WithDefaults()
	kubeadm, err := kubeadmFiles(o)
	if err != nil {
		return "", err
	}
	cc := cloudConfig{}
	for _, p := range slices.Sorted(maps.Keys(kubeadm)) {
		cc.WriteFiles = append(cc.WriteFiles, writeFile{Path: p, Permissions: "0600", Owner: "root:root", Content: kubeadm[p]})
	}
	// The script is written compressed, like the add-ons: the first node's user data is close to
	// the 32 KB limit. cloud-init decodes it (write_files encoding gz+b64).
	cc.WriteFiles = append(cc.WriteFiles,
		writeFile{Path: ScriptPath, Permissions: "0700", Owner: "root:root", Encoding: "gz+b64", Content: gzipBase64(script(o))},
		writeFile{Path: systemdDir + BootstrapUnit, Permissions: "0644", Owner: "root:root", Content: bootstrapUnit})
	if o.initNode() {
		files, err := firstNodeFiles(o)
		if err != nil {
			return "", err
		}
		cc.WriteFiles = append(cc.WriteFiles, files...)
	} else {
		cc.WriteFiles = append(cc.WriteFiles, conditionalUploadFiles(o)...)
	}
	if o.Role == RoleGPUWorker {
		env := ResolvedNCCLEnv(o.ERDMA, o.NCCLEnv)
		var conf, profile strings.Builder
		for _, name := range slices.Sorted(maps.Keys(env)) {
			fmt.Fprintf(&conf, "%s=%s\n", name, env[name])
			fmt.Fprintf(&profile, "export %s=%q\n", name, env[name])
		}
		cc.WriteFiles = append(cc.WriteFiles,
			writeFile{Path: NCCLConfPath, Permissions: "0644", Owner: "root:root", Content: conf.String()},
			writeFile{Path: NCCLProfilePath, Permissions: "0644", Owner: "root:root", Content: profile.String()},
		)
	}
	cc.WriteFiles = append(cc.WriteFiles, registryHostFiles(o.Kubernetes.ImageRegistry)...)
	cc.WriteFiles = append(cc.WriteFiles, apiHostsFiles(o)...)
	cc.WriteFiles = append(cc.WriteFiles, metadataGuardFiles()...)
	if o.Role == RoleGPUWorker && o.SpotInterruptionHandler {
		cc.WriteFiles = append(cc.WriteFiles, spotHandlerFiles()...)
	}
	dayTwo, err := dayTwoFiles(o)
	if err != nil {
		return "", err
	}
	cc.WriteFiles = append(cc.WriteFiles, dayTwo...)
	cc.WriteFiles = append(cc.WriteFiles, joinTokenFiles(o)...)
	cc.WriteFiles = append(cc.WriteFiles, etcdSnapshotFiles(o)...)
	return cc.document()
}

// document is the cloud-config: cloud-init writes the files, then only enables and starts the
// bootstrap unit (phases.go), which runs the phases, retries them and resumes after a reboot. The
// start waits for the unit (Type=oneshot), so the user's own runcmd entries (Merge) still run
// after the bootstrap, as before the unit existed.
func (cc cloudConfig) document() (string, error) {
	cc.RunCmd = [][]string{{"/bin/sh", "-c", "systemctl daemon-reload && systemctl enable --now " + BootstrapUnit}}
	// cloud-init writes a file as root:root with mode 0644 unless told otherwise (module write_files,
	// "owner" and "permissions": https://cloudinit.readthedocs.io/en/latest/reference/modules.html#write-files):
	// saying so for every file cost the first node about 800 of its 32 KB.
	for i := range cc.WriteFiles {
		if cc.WriteFiles[i].Owner == "root:root" {
			cc.WriteFiles[i].Owner = ""
		}
		if cc.WriteFiles[i].Permissions == "0644" {
			cc.WriteFiles[i].Permissions = ""
		}
	}
	out, err := yaml.Marshal(cc)
	if err != nil {
		return "", fmt.Errorf("encoding cloud-config: %w", err)
	}
	return "#cloud-config\n" + string(out), nil
}
