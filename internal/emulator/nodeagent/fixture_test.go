package nodeagent

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// The unit tests' cluster: a control-plane load balancer at lbAddress:6443 reached by the API
// server name apiName, a first control-plane node with a provider-made CA, and GPU workers that
// pin its hash, all rendered by
// internal/bootstrap exactly as the node pool renders them in testRegion on its defaults: the
// in-VPC package mirror and the region's Container Registry (inRegionRegistry), which the node
// agent's region model (region.go) lets through; upstream renders today's upstream sources.
const (
	lbAddress  = "10.0.1.200"
	joinToken  = "abcdef.0123456789abcdef"
	testRegion = "cn-wulanchabu"
)

// apiName is the API server name of the load balancer lb-1, as the node pool gives it.
var apiName = bootstrap.APIServerNameFor("lb-1")

// inRegionRegistry is the image registry the product defaults to in testRegion.
var inRegionRegistry = images.DefaultRegistry(testRegion)

type clusterCA struct {
	certPEM, keyPEM, hash, certKey string
}

var (
	caOnce   sync.Once
	caShared [2]clusterCA
)

// testCAs are two unrelated cluster CAs (the second for a worker pinned to the wrong one), made
// once per test binary: key generation is the slow part.
func testCAs(t testing.TB) [2]clusterCA {
	t.Helper()
	caOnce.Do(func() {
		for i := range caShared {
			m, err := clusterca.Generate(clusterca.ECDSAP256)
			if err != nil {
				t.Fatal(err)
			}
			certPEM, err := clusterca.SelfSign(m.Key, 24*time.Hour, time.Now())
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
			caShared[i] = clusterCA{certPEM, keyPEM, clusterca.CertHash(cert), m.CertificateKey}
		}
	})
	return caShared
}

// firstControlPlane is the first control-plane node's options: kubeadm init behind the load
// balancer, with the CA, the certificate key and a small add-on.
func firstControlPlane(ca clusterCA) bootstrap.Options {
	id := bootstrap.NodeIdentity{Role: bootstrap.RoleControlPlane, Scenario: catalog.ScenarioAITraining, Pool: "cp"}
	return bootstrap.Options{Role: bootstrap.RoleControlPlane, Region: testRegion, Kubernetes: bootstrap.Kubernetes{
		APIEndpoint: lbAddress + ":6443", APIServerName: apiName, JoinToken: joinToken, CACertHash: ca.hash, CertificateKey: ca.certKey,
		CACertPEM: ca.certPEM, CAKeyPEM: ca.keyPEM, PodSubnet: "10.244.0.0/16", ImageRegistry: inRegionRegistry,
		Addons: map[string]string{"10-team.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n"},
		Labels: id.Labels(), Taints: id.Taints(),
	}}
}

// gpuWorker is a GPU worker's options, pinned to ca.
func gpuWorker(ca clusterCA) bootstrap.Options {
	id := bootstrap.NodeIdentity{Role: bootstrap.RoleGPUWorker, Scenario: catalog.ScenarioAITraining, Pool: "a10", GPU: true,
		GPUProduct: "A10", UserLabels: map[string]string{"example.org/team": "nlp"}}
	return bootstrap.Options{Role: bootstrap.RoleGPUWorker, Region: testRegion, Kubernetes: bootstrap.Kubernetes{
		APIEndpoint: lbAddress + ":6443", APIServerName: apiName, JoinToken: joinToken, CACertHash: ca.hash, Labels: id.Labels(), Taints: id.Taints(),
		ImageRegistry: inRegionRegistry,
	}}
}

// upstream is o with today's upstream sources, as package_mirror = "internet" and
// image_registry = "" render them in any region (and the defaults outside mainland China):
// packages from pkgs.k8s.io and NVIDIA's servers, images from the public registries.
func upstream(o bootstrap.Options) bootstrap.Options {
	o.PackageMirror, o.Kubernetes.ImageRegistry = bootstrap.MirrorInternet, ""
	return o
}

// joiningControlPlane is a control-plane node that joins the first one.
func joiningControlPlane(ca clusterCA) bootstrap.Options {
	o := firstControlPlane(ca)
	o.Kubernetes.JoinControlPlane = true
	o.Kubernetes.CACertPEM, o.Kubernetes.CAKeyPEM, o.Kubernetes.Addons, o.Kubernetes.PodSubnet = "", "", nil, ""
	return o
}

// userData renders the options and Base64-encodes them as RunInstances takes them; extra, when
// given, is the user's own user_data merged after the bootstrap.
func userData(t testing.TB, o bootstrap.Options, extra ...string) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString([]byte(renderDoc(t, o, extra...)))
}

// renderDoc is the node's user data as the node pool sends it (before Base64).
func renderDoc(t testing.TB, o bootstrap.Options, extra ...string) string {
	t.Helper()
	doc, err := bootstrap.Render(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		if doc, err = bootstrap.Merge(doc, extra[0]); err != nil {
			t.Fatal(err)
		}
	}
	return doc
}

// instance is a Running instance of the test VPC, in testRegion.
func instance(id, ip, ud string, gpu bool) emulator.InstanceView {
	in := emulator.InstanceView{ID: id, Region: testRegion, Zone: testRegion + "-a", Status: "Running", HostName: "iZ" + id + "Z",
		VpcID: "vpc-1", VSwitchID: "vsw-1", PrivateIP: ip, SecurityGroupIDs: []string{"sg-1"}, UserData: ud,
		Type: "ecs.g7.xlarge", VCPUs: 4, MemoryGiB: 16}
	if gpu {
		in.Type, in.VCPUs, in.MemoryGiB, in.GPUs = "ecs.gn7i-c16g1.4xlarge", 16, 60, 1
	}
	return in
}

// goodView is a network where everything works: NAT with SNAT for the vSwitch, the load
// balancer's running TCP 6443 listener in front of the first control-plane node, one security
// group whose members reach each other; the first control-plane node and one GPU worker.
func goodView(t testing.TB) emulator.View {
	ca := testCAs(t)[0]
	return emulator.View{
		Instances: []emulator.InstanceView{
			instance("i-cp", "10.0.1.10", userData(t, firstControlPlane(ca)), false),
			instance("i-gpu1", "10.0.1.11", userData(t, gpuWorker(ca)), true),
		},
		VSwitches: map[string]emulator.VSwitchView{"vsw-1": {ID: "vsw-1", VpcID: "vpc-1", CIDR: "10.0.1.0/24"},
			"vsw-2": {ID: "vsw-2", VpcID: "vpc-1", CIDR: "10.0.2.0/24"}},
		SecurityGroups: map[string]emulator.SecurityView{
			"sg-1": {ID: "sg-1", VpcID: "vpc-1", InnerAccessAccept: true},
			"sg-2": {ID: "sg-2", VpcID: "vpc-1", InnerAccessAccept: true},
		},
		NatGateways: []emulator.NatGatewayView{{ID: "ngw-1", VpcID: "vpc-1", Snat: []emulator.SnatEntryView{
			{ID: "snat-1", SourceVSwitchID: "vsw-1", SourceCIDR: "10.0.1.0/24", SnatIP: "47.96.0.1"}}}},
		LoadBalancers: []emulator.LoadBalancerView{{ID: "lb-1", VpcID: "vpc-1", Address: lbAddress, AddressType: "intranet",
			Listeners:  []emulator.ListenerView{{Protocol: "TCP", Port: 6443, BackendPort: 6443, Running: true}},
			BackendIDs: []string{"i-cp"}}},
	}
}

// fakeKube records what the agent registers and applies.
type fakeKube struct {
	mu      sync.Mutex
	nodes   map[string]*corev1.Node
	applied [][]Addon
	// shutdowns counts ShutdownNode's calls by node; onShutdown, when set, runs in each.
	shutdowns  map[string]int
	onShutdown func(name string)
	// running are the pods PodsRunningOn lists by node; deleteErr fails DeleteNode.
	running   map[string][]string
	deleteErr error
}

func newFakeKube() *fakeKube { return &fakeKube{nodes: map[string]*corev1.Node{}} }

func (k *fakeKube) RegisterNode(_ context.Context, n *corev1.Node) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nodes[n.Name] = n.DeepCopy()
	return nil
}

func (k *fakeKube) DeleteNode(_ context.Context, name string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.deleteErr != nil {
		return k.deleteErr
	}
	delete(k.nodes, name)
	return nil
}

func (k *fakeKube) SetKubeletRunning(_ context.Context, name string, running bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.nodes[name]
	if n == nil {
		return fmt.Errorf("no node %s", name)
	}
	n.Annotations[KwokNodeAnnotation] = "stopped"
	if running {
		n.Annotations[KwokNodeAnnotation] = "fake"
	}
	return nil
}

func (k *fakeKube) ApplyAddons(_ context.Context, addons []Addon) []AddonResult {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.applied = append(k.applied, addons)
	out := make([]AddonResult, 0, len(addons))
	for _, a := range addons {
		out = append(out, AddonResult{File: a.Name, Object: "(file)"})
	}
	return out
}

// ShutdownNode and PodsRunningOn: the fake runs the pods of running; ShutdownNode reports the settings'
// whole grace period.
func (k *fakeKube) ShutdownNode(_ context.Context, name string, s ShutdownSettings) (ShutdownReport, error) {
	if k.onShutdown != nil {
		k.onShutdown(name)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.shutdowns == nil {
		k.shutdowns = map[string]int{}
	}
	k.shutdowns[name]++
	return ShutdownReport{ModeledSeconds: s.GracePeriod.Seconds()}, nil
}

func (k *fakeKube) PodsRunningOn(_ context.Context, name string) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.running[name], nil
}

func (k *fakeKube) SetUnschedulable(context.Context, string, bool) error { return nil }

func (k *fakeKube) DrainablePods(ctx context.Context, name string) ([]string, error) {
	return k.PodsRunningOn(ctx, name)
}

func (k *fakeKube) Evict(context.Context, string) error { return nil }

// syncOnce runs one round of a new agent over v and returns the statuses by instance id.
func syncOnce(t *testing.T, v emulator.View, kube Kube) map[string]NodeStatus {
	t.Helper()
	a := New(func() emulator.View { return v }, kube, t.Logf)
	a.Sync(context.Background())
	out := map[string]NodeStatus{}
	for _, st := range a.Statuses() {
		out[st.InstanceID] = st
	}
	return out
}

// instanceByID returns a pointer into the view's instances.
func instanceByID(t *testing.T, v *emulator.View, id string) *emulator.InstanceView {
	t.Helper()
	i := slices.IndexFunc(v.Instances, func(in emulator.InstanceView) bool { return in.ID == id })
	if i < 0 {
		t.Fatalf("no instance %s", id)
	}
	return &v.Instances[i]
}

// addonsYAML is the ai-training add-on set cluster-core passes the first control-plane node, with
// the validation jobs, for a pool of nodes GPU workers of gpus GPUs each.
func addonsYAML(t *testing.T, nodes, gpus int) map[string]string {
	t.Helper()
	m, err := manifests.AddonsYAML(manifests.Options{Scenario: catalog.ScenarioAITraining, Nodes: nodes, GPUsPerNode: gpus},
		manifests.AddonOptions{Validation: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustContain(t *testing.T, what, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%s = %q, want it to contain %q", what, got, want)
	}
}
