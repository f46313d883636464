package bootstrap

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

const testToken = "abcdef.0123456789abcdef"

// requireTool returns the path of a command-line tool, or fails the test naming the Debian
// package that provides it and `make test-tools`, which installs it (make test runs it first).
func requireTool(t *testing.T, tool, pkg string) string {
	t.Helper()
	return testtools.Require(t, tool, pkg)
}

func worker() Options {
	return Options{
		Role:   RoleGPUWorker,
		ERDMA:  true,
		Mounts: []string{"0a1b2c-xyz.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm nfs vers=3,nolock,proto=tcp,_netdev,nofail 0 0"},
		Kubernetes: Kubernetes{
			APIEndpoint: "10.0.0.10:6443", JoinToken: testToken,
			CACertHash: "sha256:" + strings.Repeat("ab", 32),
			Labels:     workerIdentity().Labels(),
			Taints:     workerIdentity().Taints(),
		},
		NCCLEnv: map[string]string{"NCCL_DEBUG": "WARN"},
	}
}

func workerIdentity() NodeIdentity {
	return NodeIdentity{Role: RoleGPUWorker, Scenario: "ai_training", GPU: true, GPUProduct: "A100-SXM4-80GB",
		UserTaints: []Taint{{Key: "gpucluster.io/dedicated", Value: "training", Effect: "NoExecute"}}}
}

func controlPlane() Options {
	id := NodeIdentity{Role: RoleControlPlane}
	return Options{Role: RoleControlPlane, Kubernetes: Kubernetes{APIEndpoint: "10.0.0.10:6443", JoinToken: testToken, PodSubnet: "10.244.0.0/16",
		Labels: id.Labels(), Taints: id.Taints()}}
}

func TestVersionsCheck(t *testing.T) {
	tests := []struct {
		name      string
		v         Versions
		errField  string
		warnWords string
	}{
		{name: "defaults meet the minimums", v: Versions{}},
		{name: "minimum driver with CUDA 11.8 works through minor version compatibility", v: Versions{Driver: MinDriver}, warnWords: "minor version compatibility"},
		{name: "driver one patch below the minimum", v: Versions{Driver: "510.47.02"}, errField: "driver"},
		{name: "driver not a version", v: Versions{Driver: "latest"}, errField: "driver"},
		{name: "CUDA 12.4 on R535 warns", v: Versions{CUDA: "12.4"}, warnWords: "550.54.14"},
		{name: "CUDA 12 needs a 525 driver", v: Versions{CUDA: "12.2", Driver: "520.61.05"}, errField: "driver"},
		{name: "CUDA 13 unknown", v: Versions{CUDA: "13.0"}, errField: "cuda"},
		{name: "CUDA with patch", v: Versions{CUDA: "11.8.0"}, errField: "cuda"},
		{name: "NCCL at the minimum", v: Versions{NCCL: "2.12.12"}},
		{name: "NCCL below 2.12", v: Versions{NCCL: "2.11.4"}, errField: "nccl"},
		{name: "NCCL without patch", v: Versions{NCCL: "2.18"}, errField: "nccl"},
		{name: "Kubernetes 1.24 is the minimum", v: Versions{Kubernetes: "1.24"}},
		{name: "Kubernetes 1.23", v: Versions{Kubernetes: "1.23.17"}, errField: "kubernetes"},
		{name: "Kubernetes with v prefix", v: Versions{Kubernetes: "v1.30"}, errField: "kubernetes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := tt.v.Check()
			if tt.errField != "" {
				var ve *planerr.Error
				if !errors.As(err, &ve) || ve.Path != tt.errField {
					t.Fatalf("Check() error = %v, want a *planerr.Error on %s", err, tt.errField)
				}
				if ve.Fix == "" || ve.Why == "" {
					t.Fatalf("error %v lacks why or fix", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check() = %v", err)
			}
			joined := strings.Join(warnings, "\n")
			if tt.warnWords == "" && strings.Contains(joined, "driver") {
				t.Fatalf("unexpected warnings: %s", joined)
			}
			if !strings.Contains(joined, tt.warnWords) {
				t.Fatalf("warnings %q lack %q", joined, tt.warnWords)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Options)
		field  string
	}{
		{"worker ok", func(*Options) {}, ""},
		{"unknown role", func(o *Options) { o.Role = "cpu_worker" }, "role"},
		{"token with upper case", func(o *Options) { o.Kubernetes.JoinToken = "ABCDEF.0123456789abcdef" }, "kubernetes.join_token"},
		{"token missing", func(o *Options) { o.Kubernetes.JoinToken = "" }, "kubernetes.join_token"},
		{"worker without endpoint", func(o *Options) { o.Kubernetes.APIEndpoint = "" }, "kubernetes.api_endpoint"},
		{"endpoint without port", func(o *Options) { o.Kubernetes.APIEndpoint = "10.0.0.10" }, "kubernetes.api_endpoint"},
		{"CA hash not sha256", func(o *Options) { o.Kubernetes.CACertHash = "md5:abc" }, "kubernetes.ca_cert_hash"},
		{"label in kubernetes.io namespace", func(o *Options) { o.Kubernetes.Labels = map[string]string{"node-role.kubernetes.io/gpu": ""} }, `kubernetes.labels["node-role.kubernetes.io/gpu"]`},
		{"node.kubernetes.io label allowed", func(o *Options) { o.Kubernetes.Labels = map[string]string{"node.kubernetes.io/pool": "a"} }, ""},
		{"label value too long", func(o *Options) { o.Kubernetes.Labels = map[string]string{"a/b": strings.Repeat("x", 64)} }, `kubernetes.labels["a/b"]`},
		{"taint effect", func(o *Options) { o.Kubernetes.Taints = []Taint{{Key: "a", Effect: "NoRun"}} }, "kubernetes.taints[0].effect"},
		{"taint key", func(o *Options) { o.Kubernetes.Taints = []Taint{{Key: "a b", Effect: "NoSchedule"}} }, "kubernetes.taints[0].key"},
		{"fstab line with three fields", func(o *Options) { o.Mounts = []string{"a:/ /mnt nfs"} }, "mounts[0]"},
		{"fstab line with a quote", func(o *Options) { o.Mounts = append(o.Mounts, "a:/ /mnt/x' nfs defaults") }, "mounts[1]"},
		{"fstab mount on /", func(o *Options) { o.Mounts = []string{"/dev/vdb / ext4 defaults"} }, "mounts[0]"},
		{"NCCL name", func(o *Options) { o.NCCLEnv = map[string]string{"nccl_debug": "INFO"} }, `nccl_env["nccl_debug"]`},
		{"NCCL value with $", func(o *Options) { o.NCCLEnv = map[string]string{"NCCL_DEBUG": "$(reboot)"} }, `nccl_env["NCCL_DEBUG"]`},
		{"pod subnet", func(o *Options) { o.Kubernetes.PodSubnet = "10.244.0.0" }, "kubernetes.pod_subnet"},
		{"driver", func(o *Options) { o.Versions.Driver = "470.82.01" }, "versions.driver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := worker()
			tt.mutate(&o)
			_, err := Validate(o)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			ie, ok := planerr.As(err)
			if !ok {
				t.Fatalf("Validate() = %v, want an error on %s", err, tt.field)
			}
			if ie.Path != tt.field || ie.Why == "" || ie.Fix == "" {
				t.Fatalf("error on %s (why %q, fix %q), want %s with why and fix: %v", ie.Path, ie.Why, ie.Fix, tt.field, err)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Fatalf("error message carries the join token: %v", err)
			}
		})
	}
}

func TestValidateCAHashOrExplicitOptOut(t *testing.T) {
	o := worker()
	o.Kubernetes.CACertHash = ""
	var ie *planerr.Error
	if _, err := Validate(o); !errors.As(err, &ie) || ie.Path != "kubernetes.ca_cert_hash" || !strings.Contains(ie.Fix, "insecure_skip_ca_verification") {
		t.Fatalf("Validate() without a CA hash = %v, want an error on kubernetes.ca_cert_hash naming the opt-in", err)
	}
	o.Kubernetes.InsecureSkipCAVerification = true
	warnings, err := Validate(o)
	if err != nil || !strings.Contains(strings.Join(warnings, " "), "insecure_skip_ca_verification") {
		t.Fatalf("Validate() with the opt-in = %v, %v; want a warning", warnings, err)
	}
}

// decodeCloudConfig reads a rendered document back strictly.
func decodeCloudConfig(t *testing.T, doc string) cloudConfig {
	t.Helper()
	if !strings.HasPrefix(doc, "#cloud-config\n") {
		t.Fatalf("document does not start with #cloud-config:\n%s", doc)
	}
	var cc cloudConfig
	if err := yaml.UnmarshalStrict([]byte(doc), &cc); err != nil {
		t.Fatalf("decoding the document: %v", err)
	}
	return cc
}

// file is the write_files entry of path, its Content decoded (the script is gz+b64).
func file(t *testing.T, cc cloudConfig, path string) writeFile {
	t.Helper()
	for _, f := range cc.WriteFiles {
		if f.Path == path {
			content, err := fileContent(f)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			f.Content = content
			return f
		}
	}
	t.Fatalf("no write_files entry for %s", path)
	return writeFile{}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name        string
		opts        Options
		kinds       []string
		apiVersion  string
		script      []string
		notInScript []string
		files       []string
	}{
		{
			name: "gpu worker, eRDMA, NAS, Kubernetes 1.33", opts: worker(),
			kinds: []string{"JoinConfiguration"}, apiVersion: "kubeadm.k8s.io/v1beta4",
			script: []string{"apt_version nvidia-headless-535-server 535.183.01", "nvidia-headless-535-server=$v nvidia-utils-535-server=$v",
				"nvidia-container-toolkit", "nvidia-ctk runtime configure --runtime=containerd --set-as-default",
				"env_setup.sh --egs", "nfs-common", "mkdir -p '/mnt/warm'", "mount -a", "join " + KubeadmPath, "wait_for_api",
				"https://pkgs.k8s.io/core:/stable:/v1.33/deb/", "kubelet=1.33.6-1.1", "update-initramfs -u"},
			// No host CUDA toolkit or NCCL unless HostCUDA asks; no NVIDIA .run installer; no
			// Fabric Manager on a type without NVSwitch.
			notInScript: []string{testToken, "kubeadm init", "cuda-toolkit", "libnccl", "download.nvidia.com", ".run", "fabricmanager"},
			files: []string{KubeadmPath, ScriptPath, systemdDir + BootstrapUnit, NCCLConfPath, NCCLProfilePath,
				CertsScriptPath, systemdDir + certExpiryUnit + ".service", systemdDir + certExpiryUnit + ".timer", KubeletPatchPath, systemdDir + MetadataGuardUnit},
		},
		{
			name: "control plane, Kubernetes 1.30.4 pinned", opts: func() Options { o := controlPlane(); o.Versions.Kubernetes = "1.30.4"; return o }(),
			kinds: []string{"InitConfiguration", "ClusterConfiguration", "KubeletConfiguration"}, apiVersion: "kubeadm.k8s.io/v1beta3",
			script:      []string{"kubeadm init --config " + KubeadmPath, "kubelet=1.30.4-1.1", "v1.30/deb/", "systemctl enable " + addonsService},
			notInScript: []string{testToken, "nvidia", "cuda", "erdma", "nfs-common", "kubeadm join", "upload-certs"},
			files: []string{KubeadmPath, ScriptPath, systemdDir + BootstrapUnit, AddonsDir + "/" + CNIAddonFile, AddonsScriptPath, systemdDir + addonsService,
				CertsScriptPath, systemdDir + certExpiryUnit + ".service", systemdDir + certExpiryUnit + ".timer",
				systemdDir + certRenewUnit + ".service", systemdDir + certRenewUnit + ".timer", systemdDir + MetadataGuardUnit},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Render(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			cc := decodeCloudConfig(t, doc)
			if len(cc.WriteFiles) != len(tt.files) {
				t.Fatalf("write_files has %d entries, want %v", len(cc.WriteFiles), tt.files)
			}
			for _, p := range tt.files {
				file(t, cc, p)
			}
			kf := file(t, cc, KubeadmPath)
			if kf.Permissions != "0600" {
				t.Fatalf("kubeadm config mode %s, want 0600: it holds the join token", kf.Permissions)
			}
			if strings.Count(doc, testToken) != 1 {
				t.Fatalf("join token appears %d times, want once (kubeadm config only)", strings.Count(doc, testToken))
			}
			// Each kubeadm document decodes strictly into this package's own types.
			for i, part := range strings.Split(kf.Content, "---\n") {
				var meta kubeadmMeta
				if err := yaml.Unmarshal([]byte(part), &meta); err != nil {
					t.Fatal(err)
				}
				apiVersion := tt.apiVersion
				if tt.kinds[i] == "KubeletConfiguration" {
					apiVersion = "kubelet.config.k8s.io/v1beta1"
				}
				if meta.Kind != tt.kinds[i] || meta.APIVersion != apiVersion {
					t.Fatalf("kubeadm document %d is %s %s, want %s %s", i, meta.APIVersion, meta.Kind, apiVersion, tt.kinds[i])
				}
				var into any
				switch meta.Kind {
				case "KubeletConfiguration":
					into = &kubeletConfiguration{}
				case "JoinConfiguration":
					into = &joinConfiguration{}
				case "InitConfiguration":
					into = &initConfiguration{}
				default:
					into = &clusterConfiguration{}
				}
				if err := yaml.UnmarshalStrict([]byte(part), into); err != nil {
					t.Fatalf("kubeadm %s: %v", meta.Kind, err)
				}
			}
			sf := file(t, cc, ScriptPath)
			for _, want := range tt.script {
				if !strings.Contains(sf.Content, want) {
					t.Errorf("script lacks %q", want)
				}
			}
			for _, bad := range tt.notInScript {
				if strings.Contains(strings.ToLower(sf.Content), strings.ToLower(bad)) {
					t.Errorf("script contains %q", bad)
				}
			}
			if len(cc.RunCmd) != 1 || !strings.Contains(strings.Join(cc.RunCmd[0], " "), "systemctl enable --now "+BootstrapUnit) {
				t.Fatalf("runcmd = %v, want only the bootstrap unit enabled and started", cc.RunCmd)
			}
			if unit := file(t, cc, systemdDir+BootstrapUnit).Content; !strings.Contains(unit, "ExecStart=/bin/bash "+ScriptPath) || !strings.Contains(unit, "Restart=on-failure") {
				t.Fatalf("bootstrap unit:\n%s", unit)
			}
		})
	}
}

func TestRenderWorkerLabelsTaintsAndNCCL(t *testing.T) {
	doc, err := Render(worker())
	if err != nil {
		t.Fatal(err)
	}
	cc := decodeCloudConfig(t, doc)
	var j joinConfiguration
	if err := yaml.Unmarshal([]byte(file(t, cc, KubeadmPath).Content), &j); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(j.NodeRegistration.KubeletExtraArgs)
	if !strings.Contains(string(args), "gpucluster.io/node-role=gpu-worker,gpucluster.io/scenario=ai_training") {
		t.Fatalf("node-labels = %s", args)
	}
	if len(j.NodeRegistration.Taints) != 2 || j.NodeRegistration.Taints[0].Key != GPUTaintKey || j.NodeRegistration.Taints[1].Effect != "NoExecute" {
		t.Fatalf("taints = %+v, want the GPU taint then the caller's", j.NodeRegistration.Taints)
	}
	if got := j.Discovery.BootstrapToken.CACertHashes; len(got) != 1 || j.Discovery.BootstrapToken.UnsafeSkipCAVerification {
		t.Fatalf("discovery = %+v, want the CA hash pinned", j.Discovery.BootstrapToken)
	}
	conf := file(t, cc, NCCLConfPath).Content
	for _, want := range []string{"NCCL_IB_HCA=erdma_0\n", "NCCL_DEBUG=WARN\n", "NCCL_IB_DISABLE=0\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nccl.conf lacks %q:\n%s", want, conf)
		}
	}
	o := worker()
	o.ERDMA = false
	o.NCCLEnv = nil
	doc, _ = Render(o)
	if c := file(t, decodeCloudConfig(t, doc), NCCLConfPath).Content; c != "NCCL_IB_DISABLE=1\n" {
		t.Fatalf("without eRDMA nccl.conf = %q, want NCCL_IB_DISABLE=1 only", c)
	}
}

func TestRenderControlPlaneKeepsItsTaint(t *testing.T) {
	doc, err := Render(controlPlane())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(file(t, decodeCloudConfig(t, doc), KubeadmPath).Content, "---\n")
	var ic initConfiguration
	var cc clusterConfiguration
	if err := yaml.Unmarshal([]byte(parts[0]), &ic); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(parts[1]), &cc); err != nil {
		t.Fatal(err)
	}
	if len(ic.NodeRegistration.Taints) != 1 || ic.NodeRegistration.Taints[0].Key != controlPlaneKey {
		t.Fatalf("control plane taints = %+v", ic.NodeRegistration.Taints)
	}
	if ic.BootstrapTokens[0].Token != testToken || cc.ControlPlaneEndpoint != "10.0.0.10:6443" || cc.Networking["podSubnet"] != "10.244.0.0/16" {
		t.Fatalf("init = %+v, cluster = %+v", ic, cc)
	}
}

func TestRenderRejectsInvalid(t *testing.T) {
	o := worker()
	o.Role = ""
	if _, err := Render(o); err == nil {
		t.Fatal("Render accepted an empty role")
	}
}

// TestRenderScriptBashSyntax hands every rendered script to bash -n.
func TestRenderScriptBashSyntax(t *testing.T) {
	bash := requireTool(t, "bash", "bash")
	for name, o := range map[string]Options{"worker": worker(), "control_plane": controlPlane()} {
		doc, err := Render(o)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name+".sh")
		if err := os.WriteFile(p, []byte(file(t, decodeCloudConfig(t, doc), ScriptPath).Content), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bash, "-n", p).CombinedOutput(); err != nil {
			t.Fatalf("bash -n %s: %v\n%s", name, err, out)
		}
	}
}

// TestRenderCloudInitSchema hands every rendered document to cloud-init's own schema check.
func TestRenderCloudInitSchema(t *testing.T) {
	ci := requireTool(t, "cloud-init", "cloud-init")
	noERDMA := worker()
	noERDMA.ERDMA, noERDMA.Mounts, noERDMA.Kubernetes.CACertHash, noERDMA.Kubernetes.InsecureSkipCAVerification = false, nil, "", true
	for name, o := range map[string]Options{"worker": worker(), "worker_plain": noERDMA, "control_plane": controlPlane()} {
		t.Run(name, func(t *testing.T) {
			doc, err := Render(o)
			if err != nil {
				t.Fatal(err)
			}
			cloudInitSchema(t, ci, doc)
		})
	}
}

func cloudInitSchema(t *testing.T, ci, doc string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "user-data.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ci, "schema", "--config-file", p).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Valid cloud-config") {
		t.Fatalf("cloud-init schema --config-file: %v\n%s", err, out)
	}
}
