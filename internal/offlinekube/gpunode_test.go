package offlinekube

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// gpuDaemonSets are the dcgm-exporter and GPU health agent DaemonSets as the add-ons render them.
func gpuDaemonSets(t *testing.T) (exporter, agent appsv1.DaemonSet) {
	t.Helper()
	files, err := manifests.Addons(manifests.Options{Scenario: catalog.ScenarioAITraining, Nodes: 2, GPUsPerNode: 8,
		ImageRegistry: "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"}, manifests.AddonOptions{GPUHealthAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, d := range f.Docs {
			if d.Kind != "DaemonSet" {
				continue
			}
			var ds appsv1.DaemonSet
			if err := yaml.Unmarshal([]byte(d.YAML), &ds); err != nil {
				t.Fatal(err)
			}
			switch ds.Name {
			case "dcgm-exporter":
				exporter = ds
			case manifests.GPUHealthAgentName:
				agent = ds
			}
		}
	}
	if exporter.Name == "" || agent.Name == "" {
		t.Fatalf("the add-ons lack the dcgm-exporter (%q) or the GPU health agent (%q) DaemonSet", exporter.Name, agent.Name)
	}
	return exporter, agent
}

// podOf is a Running pod of the DaemonSet on node.
func podOf(ds appsv1.DaemonSet, node, ip string) *corev1.Pod {
	spec := *ds.Spec.Template.Spec.DeepCopy()
	spec.NodeName = node
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-x", Namespace: ds.Namespace, UID: types.UID("u-" + ds.Name)}, Spec: spec,
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}}
}

// TestGPUNodePodPrograms: the rendered GPU health agent pod runs the agent's binary with the
// container's arguments, the service account's kubeconfig, NODE_NAME as the downward API fills
// it, and its node's host (metadata service, cloud endpoint) and the pod network's host proxy;
// the rendered dcgm-exporter pod answers /metrics with what its node's GPUs report. A pod on a
// node without a host, or before any host is known, gets no program and says why.
func TestGPUNodePodPrograms(t *testing.T) {
	exporterDS, agentDS := gpuDaemonSets(t)
	gpus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"} 79 for "+r.URL.Query().Get("instance_id")+"\n")
	}))
	defer gpus.Close()
	client := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{"instance": "i-1"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cpu-1"}})
	n, err := newPodNetwork(t.Logf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	r := &podPrograms{client: client, network: n, logf: t.Logf}
	runOn := func(pod *corev1.Pod) *podRun {
		return &podRun{pod: pod, container: pod.Spec.Containers[0], dir: t.TempDir(), client: client, kubeconfig: "/work/sa.kubeconfig",
			host:      func(ctx context.Context) (NodeHost, error) { return r.nodeHost(ctx, pod.Spec.NodeName) },
			hostProxy: n.hostProxyURL(), stop: func() {}}
	}
	agentPod, exporterPod := podOf(agentDS, "gpu-1", "192.168.0.11"), podOf(exporterDS, "gpu-1", "10.244.1.5")
	agent, exporter := programFor(agentPod.Spec.Containers[0].Image), programFor(exporterPod.Spec.Containers[0].Image)
	if agent == nil || agent.binary != "gpucluster-gpu-health-agent" || exporter == nil || exporter.serve == nil {
		t.Fatalf("the table runs %+v for the agent's image and %+v for dcgm-exporter's", agent, exporter)
	}
	ctx := t.Context()
	if _, err := agent.prepare(ctx, runOn(agentPod)); err == nil || !strings.Contains(err.Error(), "SetNodeHosts") {
		t.Errorf("the agent before any node host: %v, want it refused naming SetNodeHosts", err)
	}
	r.hosts = func(node *corev1.Node) (NodeHost, bool) {
		id := node.Annotations["instance"]
		return NodeHost{MetadataEndpoint: "http://127.0.0.1:1/metadata/" + id, CloudEndpoint: "http://127.0.0.1:1",
			DCGMMetricsURL: gpus.URL + "?instance_id=" + url.QueryEscape(id)}, id != ""
	}
	l, err := agent.prepare(ctx, runOn(agentPod))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"-kubeconfig=/work/sa.kubeconfig"}, agentPod.Spec.Containers[0].Args...) {
		if !slices.Contains(l.args, want) {
			t.Errorf("agent arguments %v lack %s", l.args, want)
		}
	}
	for _, want := range []string{"NODE_NAME=gpu-1", "METADATA_ENDPOINT=http://127.0.0.1:1/metadata/i-1", "CLOUD_ENDPOINT=http://127.0.0.1:1", "HTTP_PROXY=" + n.hostProxyURL()} {
		if !slices.Contains(l.env, want) {
			t.Errorf("agent environment %v lacks %s", l.env, want)
		}
	}
	offHost := podOf(agentDS, "gpu-1", "10.244.1.9")
	offHost.Spec.HostNetwork = false
	if _, err := agent.prepare(ctx, runOn(offHost)); err == nil || !strings.Contains(err.Error(), "host network") {
		t.Errorf("an agent pod off the host network: %v, want it refused", err)
	}
	if _, err := agent.prepare(ctx, runOn(podOf(agentDS, "cpu-1", "192.168.0.12"))); err == nil || !strings.Contains(err.Error(), "no host") {
		t.Errorf("an agent on a node without a host: %v, want it refused", err)
	}

	h, err := exporter.serve(ctx, runOn(exporterPod))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	n.serve(exporterPod.Status.PodIP, 9400, strings.TrimPrefix(srv.URL, "http://"))
	// As the agent reads it: through the host proxy, at the pod's IP and the container's port.
	proxy, err := url.Parse(n.hostProxyURL())
	if err != nil {
		t.Fatal(err)
	}
	viaHost := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	resp, err := viaHost.Get("http://10.244.1.5:9400/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"} 79 for i-1\n" {
		t.Errorf("GET the exporter pod's /metrics through the host proxy: %s %q, want the node's GPUs", resp.Status, body)
	}
	if resp, err := viaHost.Get("http://10.244.1.6:9400/metrics"); err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Errorf("GET a pod IP no program serves: %v %v, want 502", resp, err)
	}
}

// TestContainerEnv: literal values and the downward API fields a DaemonSet uses are filled; any
// other source is refused by name.
func TestContainerEnv(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	got, err := containerEnv(pod, corev1.Container{Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "N", ValueFrom: field("spec.nodeName")},
		{Name: "P", ValueFrom: field("metadata.name")}, {Name: "S", ValueFrom: field("metadata.namespace")}, {Name: "I", ValueFrom: field("status.podIP")}}})
	if want := []string{"A=1", "N=n1", "P=p", "S=ns", "I=10.0.0.1"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("containerEnv = %v, %v; want %v", got, err, want)
	}
	for _, e := range []corev1.EnvVar{{Name: "L", ValueFrom: field("metadata.labels['x']")},
		{Name: "K", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}}} {
		if _, err := containerEnv(pod, corev1.Container{Env: []corev1.EnvVar{e}}); err == nil || !strings.Contains(err.Error(), e.Name) {
			t.Errorf("env %s: %v, want refused by name", e.Name, err)
		}
	}
}
