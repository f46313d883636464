package nodeagent

import (
	"encoding/base64"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/regionreach"
)

// The region tests run the agent over goodView (cn-wulanchabu, NAT with an SNAT entry for the
// nodes' vSwitch: a route out) with the user data internal/bootstrap renders there on its
// defaults (in-region), with upstream sources (package_mirror = "internet", image_registry = ""),
// or with the upstream user data rewritten by hand to take one source at a time from the region
// (inRegion), to judge each image source on its own.

// Where the in-region rewrite takes things from: the region's Container Registry VPC endpoint,
// the in-VPC mirror's Kubernetes packages, and an OSS bucket of the region for NVIDIA's files.
const (
	inRegionRepo   = "registry-vpc." + testRegion + ".aliyuncs.com/google_containers"
	inRegionPause  = inRegionRepo + "/pause:3.10"
	inRegionBucket = "http://gpu-files.oss-" + testRegion + "-internal.aliyuncs.com/"
)

var pkgsRepoRE = regexp.MustCompile(`https://pkgs\.k8s\.io/core:/stable:/(v[0-9.]+)/deb/`)

// inRegion rewrites an upstream node's files to take everything from in-region sources, much as
// the in-region bootstrap does: Kubernetes packages from the in-VPC mirror, NVIDIA's files from an OSS bucket
// of the region, kubeadm's images and a pinned version from the region's registry, containerd's
// pause image from it too, and Flannel's images.
func inRegion(files map[string]string) {
	inRegionDownloads(files)
	s := files[bootstrap.ScriptPath]
	s = strings.Replace(s, "systemctl enable containerd\n",
		`sed -i 's#sandbox_image = .*#sandbox_image = "`+inRegionPause+`"#' /etc/containerd/config.toml`+"\nsystemctl enable containerd\n", 1)
	files[bootstrap.ScriptPath] = s
	if k, ok := files[bootstrap.KubeadmPath]; ok && strings.Contains(k, "kind: ClusterConfiguration") {
		k = strings.Replace(k, "kind: ClusterConfiguration\n", "kind: ClusterConfiguration\nimageRepository: "+inRegionRepo+"\n", 1)
		files[bootstrap.KubeadmPath] = regexp.MustCompile(`kubernetesVersion: stable-1\.(\d+)`).ReplaceAllString(k, "kubernetesVersion: v1.$1.0")
	}
	if cni, ok := files[bootstrap.AddonsDir+"/"+bootstrap.CNIAddonFile]; ok {
		files[bootstrap.AddonsDir+"/"+bootstrap.CNIAddonFile] = strings.ReplaceAll(cni, "ghcr.io/flannel-io/", "registry-vpc."+testRegion+".aliyuncs.com/flannel-io/")
	}
}

// flannelFromGHCR undoes inRegion's move of Flannel's images: they come from ghcr.io, as today.
func flannelFromGHCR(files map[string]string) {
	p := bootstrap.AddonsDir + "/" + bootstrap.CNIAddonFile
	files[p] = strings.ReplaceAll(files[p], "registry-vpc."+testRegion+".aliyuncs.com/flannel-io/", "ghcr.io/flannel-io/")
}

// inRegionDownloads is inRegion's part for the script's downloads alone.
func inRegionDownloads(files map[string]string) {
	s := files[bootstrap.ScriptPath]
	s = pkgsRepoRE.ReplaceAllString(s, "http://"+regionreach.VPCMirrorHost+"/kubernetes-new/core/stable/$1/deb/")
	for _, host := range []string{"us.download.nvidia.com", "developer.download.nvidia.com", "nvidia.github.io"} {
		s = strings.ReplaceAll(s, "https://"+host+"/", inRegionBucket+host+"/")
	}
	files[bootstrap.ScriptPath] = s
}

// rewritten is rewrittenDoc Base64-encoded, as RunInstances takes user data.
func rewritten(t *testing.T, o bootstrap.Options, edits ...func(files map[string]string)) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString([]byte(rewrittenDoc(t, o, edits...)))
}

// rewrittenDoc renders the options, decodes the user data as the node would, lets the edits
// change the files, and encodes them again as one #cloud-config document.
func rewrittenDoc(t *testing.T, o bootstrap.Options, edits ...func(files map[string]string)) string {
	t.Helper()
	ci, err := DecodeUserData(userData(t, o))
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range edits {
		edit(ci.Files)
	}
	type file struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	var doc struct {
		WriteFiles []file `json:"write_files"`
	}
	for _, p := range slices.Sorted(maps.Keys(ci.Files)) {
		doc.WriteFiles = append(doc.WriteFiles, file{p, ci.Files[p]})
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return "#cloud-config\n" + string(b)
}

// upstreamView is goodView with both nodes rendered with upstream sources.
func upstreamView(t *testing.T) emulator.View {
	ca := testCAs(t)[0]
	v := goodView(t)
	instanceByID(t, &v, "i-cp").UserData = userData(t, upstream(firstControlPlane(ca)))
	instanceByID(t, &v, "i-gpu1").UserData = userData(t, upstream(gpuWorker(ca)))
	return v
}

func setRegion(v *emulator.View, region string) {
	for i := range v.Instances {
		v.Instances[i].Region, v.Instances[i].Zone = region, region+"-a"
	}
}

// outcome is what a test expects of one instance.
type outcome struct {
	ready    bool     // registered and Ready (no reason)
	notReady bool     // registered, NotReady
	reason   []string // pieces of the reason (refused or NotReady)
}

func checkOutcomes(t *testing.T, got map[string]NodeStatus, kube *fakeKube, want map[string]outcome) {
	t.Helper()
	for id, w := range want {
		st := got[id]
		for _, piece := range w.reason {
			mustContain(t, id+" reason", st.Reason, piece)
		}
		switch {
		case w.ready:
			if st.Node == "" || st.Reason != "" {
				t.Errorf("%s: want it Ready, got node %q, reason %q", id, st.Node, st.Reason)
			} else if n := kube.nodes[st.Node]; n.Annotations[KwokNodeAnnotation] != "fake" {
				t.Errorf("%s: node %s not handed to kwok: %v", id, st.Node, n.Annotations)
			}
		case w.notReady:
			n := kube.nodes[st.Node]
			if st.Node == "" || n == nil {
				t.Fatalf("%s: want it registered NotReady, not registered: %s", id, st.Reason)
			}
			if n.Annotations[KwokNodeAnnotation] != NetworkNotReadyOwner || !hasCondition(n, corev1.NodeReady, corev1.ConditionFalse, "cni plugin not initialized") {
				t.Errorf("%s: node %s is not NotReady for want of a pod network: %v %v", id, st.Node, n.Annotations, n.Status.Conditions)
			}
		default:
			if st.Node != "" {
				t.Errorf("%s registered as %s, want it refused", id, st.Node)
			}
		}
	}
}

func hasCondition(n *corev1.Node, typ corev1.NodeConditionType, status corev1.ConditionStatus, message string) bool {
	return slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == typ && c.Status == status && strings.Contains(c.Message, message)
	})
}

// TestRegionRefusesTodaysBootstrap feeds the user data internal/bootstrap renders with upstream
// sources (package_mirror = "internet", image_registry = "") to nodes in cn-wulanchabu with a NAT
// route: the first control-plane node is refused for every host it needs that the mainland blocks
// or makes unreliable (downloads, kubeadm's images, containerd's pause image, Flannel's), each
// named with its source. The same nodes on the region's defaults register (TestStaticChecks,
// "everything reachable"; TestRegionInRegionBootstrap).
func TestRegionRefusesTodaysBootstrap(t *testing.T) {
	v := upstreamView(t)
	kube := newFakeKube()
	got := syncOnce(t, v, kube)
	checkOutcomes(t, got, kube, map[string]outcome{
		"i-cp": {reason: []string{
			"pkgs.k8s.io is unreliable from cn-wulanchabu", "a NAT gateway or EIP gives a route, not reachability", regionreach.SourceKubeadmAptIssue,
			"pulling registry.k8s.io/kube-apiserver:v1.33.", "(kubeadm's control-plane images from imageRepository registry.k8s.io", "registry.k8s.io is blocked", regionreach.SourceRegistryK8sIssue,
			"pulling registry.k8s.io/pause:3.10@sha256:", "the pause (sandbox) image every pod starts in, set by the bootstrap script",
			"ghcr.io/flannel-io/flannel:", "ghcr.io is unreliable", regionreach.SourceGHCRIssue,
		}},
		"i-gpu1": {reason: []string{"no API server answers"}},
	})
}

// TestRegionRefusesTodaysGPUWorker: with an in-region control plane, a GPU worker whose bootstrap
// takes its packages from the internet (package_mirror = "internet", the default outside the
// mainland) is refused for NVIDIA's container toolkit repository and the Kubernetes packages, even
// with a NAT route.
func TestRegionRefusesTodaysGPUWorker(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	instanceByID(t, &v, "i-gpu1").UserData = userData(t, upstream(gpuWorker(ca)))
	kube := newFakeKube()
	got := syncOnce(t, v, kube)
	checkOutcomes(t, got, kube, map[string]outcome{
		"i-cp": {ready: true},
		"i-gpu1": {reason: []string{
			"nvidia.github.io is blocked from cn-wulanchabu", regionreach.SourceNVIDIAGitHubIO,
			"pkgs.k8s.io is unreliable",
			"pulling registry.k8s.io/pause:3.10",
		}},
	})
}

// TestRegionInRegionBootstrap is the counter-test: the same nodes on the bootstrap's defaults in
// cn-wulanchabu (the in-VPC package mirror, the region's registry) register Ready; the upstream
// bootstrap, the default outside the mainland, registers Ready in Singapore and Hong Kong with the
// NAT route; a bootstrap rewritten by hand to take everything from the region does too.
func TestRegionInRegionBootstrap(t *testing.T) {
	ca := testCAs(t)[0]
	cases := map[string]func(t *testing.T, v *emulator.View){
		"the defaults in cn-wulanchabu": func(*testing.T, *emulator.View) {},
		"upstream rewritten to in-region sources in cn-wulanchabu": func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-cp").UserData = rewritten(t, upstream(firstControlPlane(ca)), inRegion)
			instanceByID(t, v, "i-gpu1").UserData = rewritten(t, upstream(gpuWorker(ca)), inRegion)
		},
		"upstream bootstrap in ap-southeast-1": func(_ *testing.T, v *emulator.View) { setRegion(v, "ap-southeast-1") },
		"upstream bootstrap in cn-hongkong":    func(_ *testing.T, v *emulator.View) { setRegion(v, "cn-hongkong") },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			v := upstreamView(t)
			if strings.Contains(name, "cn-wulanchabu") {
				v = goodView(t)
			}
			change(t, &v)
			kube := newFakeKube()
			got := syncOnce(t, v, kube)
			checkOutcomes(t, got, kube, map[string]outcome{"i-cp": {ready: true}, "i-gpu1": {ready: true}})
			if notes := got["i-cp"].Notes; len(notes) > 0 {
				t.Errorf("i-cp notes %q, want none", notes)
			}
		})
	}
	t.Run("in-region defaults need no route", func(t *testing.T) {
		v := goodView(t)
		v.NatGateways = nil
		kube := newFakeKube()
		checkOutcomes(t, syncOnce(t, v, kube), kube, map[string]outcome{"i-cp": {ready: true}, "i-gpu1": {ready: true}})
	})
	t.Run("no route in ap-southeast-1 still fails", func(t *testing.T) {
		v := upstreamView(t)
		setRegion(&v, "ap-southeast-1")
		v.NatGateways = nil
		kube := newFakeKube()
		checkOutcomes(t, syncOnce(t, v, kube), kube, map[string]outcome{"i-cp": {reason: []string{NoRouteReason}}})
	})
}

// TestRegionImages changes one image source of the cluster rewritten to in-region sources at a
// time.
func TestRegionImages(t *testing.T) {
	ca := testCAs(t)[0]
	hostsToml := func(registry, mirror string, configPath bool) func(map[string]string) {
		return func(files map[string]string) {
			files["/etc/containerd/certs.d/"+registry+"/hosts.toml"] = "server = \"https://" + registry + "\"\n\n[host.\"https://" + mirror + "\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
			// The bootstrap sets config_path on every node; without, containerd 1.7 reads no hosts.toml.
			if !configPath {
				files[bootstrap.ScriptPath] = regexp.MustCompile(`(?m)^.*config_path.*\n`).ReplaceAllString(files[bootstrap.ScriptPath], "")
			}
		}
	}
	cases := []struct {
		name           string
		cp, worker     []func(map[string]string)
		wantCP, wantW  outcome
		wantCPNoteHost string
	}{
		{name: "kubeadm's default imageRepository",
			cp: []func(map[string]string){inRegion, func(f map[string]string) {
				f[bootstrap.KubeadmPath] = strings.Replace(f[bootstrap.KubeadmPath], "imageRepository: "+inRegionRepo+"\n", "", 1)
			}},
			wantCP: outcome{reason: []string{"pulling registry.k8s.io/kube-apiserver", "registry.k8s.io is blocked"}},
			wantW:  outcome{reason: []string{"no API server answers"}}},
		{name: "containerd's default pause image on a worker",
			worker: []func(map[string]string){inRegion, func(f map[string]string) {
				f[bootstrap.ScriptPath] = regexp.MustCompile(`(?m)^[ \t]*sed -i .*sandbox.*\n`).ReplaceAllString(f[bootstrap.ScriptPath], "")
			}},
			wantCP: outcome{ready: true},
			wantW:  outcome{notReady: true, reason: []string{"pulling registry.k8s.io/pause:3.8", "containerd's default"}}},
		{name: "Flannel from ghcr.io: every node registers NotReady",
			cp:     []func(map[string]string){inRegion, flannelFromGHCR},
			wantCP: outcome{notReady: true, reason: []string{"ghcr.io/flannel-io/flannel:", "ghcr.io is unreliable", cniNotReady}},
			wantW:  outcome{notReady: true, reason: []string{"ghcr.io/flannel-io/flannel-cni-plugin:"}}},
		{name: "Flannel from ghcr.io through an in-region hosts.toml mirror",
			cp:     []func(map[string]string){inRegion, flannelFromGHCR, hostsToml("ghcr.io", "registry-vpc."+testRegion+".aliyuncs.com", true)},
			worker: []func(map[string]string){inRegion, hostsToml("ghcr.io", "registry-vpc."+testRegion+".aliyuncs.com", true)},
			wantCP: outcome{ready: true}, wantW: outcome{ready: true}},
		{name: "hosts.toml mirror without config_path is not read",
			cp:     []func(map[string]string){inRegion, flannelFromGHCR, hostsToml("ghcr.io", "registry-vpc."+testRegion+".aliyuncs.com", false)},
			wantCP: outcome{notReady: true, reason: []string{"ghcr.io is unreliable", "containerd 1.7 does not read them"}},
			wantW:  outcome{notReady: true}},
		{name: "hosts.toml mirror that is itself filtered",
			cp:     []func(map[string]string){inRegion, flannelFromGHCR, hostsToml("ghcr.io", "docker.io", true)},
			wantCP: outcome{notReady: true, reason: []string{"docker.io is blocked", "then ghcr.io is unreliable"}},
			wantW:  outcome{notReady: true}},
		{name: "kubeadm looks up a stable label: a note, not a failure",
			cp: []func(map[string]string){inRegion, func(f map[string]string) {
				f[bootstrap.KubeadmPath] = regexp.MustCompile(`kubernetesVersion: v1\.(\d+)\.\d+`).ReplaceAllString(f[bootstrap.KubeadmPath], "kubernetesVersion: stable-1.$1")
			}},
			wantCP: outcome{ready: true}, wantW: outcome{ready: true}, wantCPNoteHost: "dl.k8s.io is unreliable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cp == nil {
				tc.cp = []func(map[string]string){inRegion}
			}
			if tc.worker == nil {
				tc.worker = []func(map[string]string){inRegion}
			}
			v := goodView(t)
			instanceByID(t, &v, "i-cp").UserData = rewritten(t, upstream(firstControlPlane(ca)), tc.cp...)
			instanceByID(t, &v, "i-gpu1").UserData = rewritten(t, upstream(gpuWorker(ca)), tc.worker...)
			kube := newFakeKube()
			got := syncOnce(t, v, kube)
			checkOutcomes(t, got, kube, map[string]outcome{"i-cp": tc.wantCP, "i-gpu1": tc.wantW})
			notes := strings.Join(got["i-cp"].Notes, "\n")
			if tc.wantCPNoteHost == "" && notes != "" {
				t.Errorf("i-cp notes %q, want none", notes)
			}
			if tc.wantCPNoteHost != "" {
				mustContain(t, "i-cp notes", notes, tc.wantCPNoteHost)
				mustContain(t, "i-cp notes", notes, "falls back to its own version")
			}
		})
	}
}

// TestRegionImageRegistry runs the bootstrap's own in-region image setting
// (Kubernetes.ImageRegistry: kubeadm's imageRepository, the pause image, the CNI's images, a
// hosts.toml per public registry) through the image rule: every image resolves in the region, so
// with package_mirror = "internet" what still refuses the nodes is their downloads; with the
// region's default package mirror too, they go Ready.
func TestRegionImageRegistry(t *testing.T) {
	ca := testCAs(t)[0]
	cpOpts, wOpts := firstControlPlane(ca), gpuWorker(ca)
	cpOpts.PackageMirror, wOpts.PackageMirror = bootstrap.MirrorInternet, bootstrap.MirrorInternet

	t.Run("downloads still refused", func(t *testing.T) {
		v := goodView(t)
		instanceByID(t, &v, "i-cp").UserData = userData(t, cpOpts)
		kube := newFakeKube()
		got := syncOnce(t, v, kube)
		checkOutcomes(t, got, kube, map[string]outcome{"i-cp": {reason: []string{"pkgs.k8s.io is unreliable"}}})
		for _, host := range []string{"registry.k8s.io", "ghcr.io", "pulling"} {
			if strings.Contains(got["i-cp"].Reason, host) {
				t.Errorf("i-cp reason names %s, want only its downloads: %s", host, got["i-cp"].Reason)
			}
		}
	})
	t.Run("downloads in-region too: Ready", func(t *testing.T) {
		v := goodView(t)
		cpOpts.PackageMirror, wOpts.PackageMirror = "", ""
		instanceByID(t, &v, "i-cp").UserData = userData(t, cpOpts)
		instanceByID(t, &v, "i-gpu1").UserData = userData(t, wOpts)
		kube := newFakeKube()
		checkOutcomes(t, syncOnce(t, v, kube), kube, map[string]outcome{"i-cp": {ready: true}, "i-gpu1": {ready: true}})
	})
}

// TestRegionFabricManager: an NVSwitch instance (sccgn7ex, the catalog's NVSwitch type) whose
// bootstrap installs no Fabric Manager (rendered without Options.NVSwitch) registers with its GPUs
// advertised and the condition CUDAInitFailed. With Fabric Manager (Options.NVSwitch, as the node
// pool renders an NVSwitch type), or on a type without NVSwitch, no condition.
func TestRegionFabricManager(t *testing.T) {
	ca := testCAs(t)[0]
	cases := []struct {
		name, region, typ string
		worker            bootstrap.Options
		want              bool
	}{
		{"upstream bootstrap on sccgn7ex (ap-southeast-1)", "ap-southeast-1", "ecs.sccgn7ex.32xlarge", upstream(gpuWorker(ca)), true},
		{"in-region bootstrap on sccgn7ex without NVSwitch (cn-wulanchabu)", testRegion, "ecs.sccgn7ex.32xlarge", gpuWorker(ca), true},
		{"with Fabric Manager (NVSwitch)", testRegion, "ecs.sccgn7ex.32xlarge", withNVSwitch(gpuWorker(ca)), false},
		{"no NVSwitch (gn7i)", testRegion, "ecs.gn7i-c16g1.4xlarge", gpuWorker(ca), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := goodView(t)
			if tc.region != testRegion {
				v = upstreamView(t)
			}
			setRegion(&v, tc.region)
			w := instanceByID(t, &v, "i-gpu1")
			w.UserData = userData(t, tc.worker)
			w.Type, w.GPUs = tc.typ, 8
			kube := newFakeKube()
			got := syncOnce(t, v, kube)
			checkOutcomes(t, got, kube, map[string]outcome{"i-cp": {ready: true}, "i-gpu1": {ready: true}})
			n := kube.nodes[got["i-gpu1"].Node]
			if n == nil {
				t.Fatal("i-gpu1 not registered")
			}
			if q := n.Status.Capacity[GPUResource]; q.Value() != 8 {
				t.Errorf("GPUs advertised %v, want 8", q.String())
			}
			has := hasCondition(n, ConditionCUDAInitFailed, corev1.ConditionTrue, "error 802")
			if has != tc.want {
				t.Errorf("condition %s: %v, want %v; conditions %v", ConditionCUDAInitFailed, has, tc.want, n.Status.Conditions)
			}
			if tc.want {
				mustContain(t, "condition", n.Status.Conditions[0].Message, "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/")
			}
		})
	}
}

// withNVSwitch is o for an NVSwitch instance type: the bootstrap installs Fabric Manager.
func withNVSwitch(o bootstrap.Options) bootstrap.Options {
	o.NVSwitch = true
	return o
}
