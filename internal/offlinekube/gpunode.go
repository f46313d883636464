package offlinekube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The GPU nodes' pod programs. Two add-on images need more than the API server: the GPU health
// agent (cmd/gpucluster-gpu-health-agent) reads its node's dcgm-exporter and, on the host
// network, the instance metadata service and the cloud's API; dcgm-exporter reads the node's
// GPUs. kwok's nodes have neither GPUs nor a metadata service, so whoever registers the nodes
// (the emulator's node agent, in the tests) says where each node's are: SetNodeHosts. With
// that, the agent runs as the real binary for each of its DaemonSet's pods, with the container's
// arguments and environment, and dcgm-exporter's pods answer on their pod IP what the node's
// GPUs report: a DaemonSet that is not deployed on a node does nothing for it, as on the cloud.

// NodeHost is what a node offers its pods beyond the cluster: what a host-network process on it
// reaches at the well-known addresses, and what its GPUs report.
type NodeHost struct {
	// MetadataEndpoint answers as http://100.100.100.200 answers on the node's instance (the
	// instance metadata service: its id, region and RAM role keys).
	MetadataEndpoint string
	// CloudEndpoint is one base URL for the cloud's APIs as the node reaches them.
	CloudEndpoint string
	// DCGMMetricsURL answers, in dcgm-exporter's Prometheus text, what DCGM reads of the node's
	// GPUs: what dcgm-exporter on the node serves at /metrics.
	DCGMMetricsURL string
}

// SetNodeHosts says where each node's host is: hosts answers false for a node it does not know.
// Until it is set, the GPU rows' pods run without their programs (the reason is logged).
func (c *Cluster) SetNodeHosts(hosts func(node *corev1.Node) (NodeHost, bool)) {
	c.mu.Lock()
	r := c.programs
	c.mu.Unlock()
	if r == nil {
		return // a cluster that failed to start runs no programs
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts = hosts
	clear(r.failed) // a reason logged before is now stale
}

var errNoNodeHosts = errors.New("the cluster was given no node hosts (Cluster.SetNodeHosts): the pod's program needs its node's")

// nodeHost is the host of the named node.
func (r *podPrograms) nodeHost(ctx context.Context, name string) (NodeHost, error) {
	r.mu.Lock()
	hosts := r.hosts
	r.mu.Unlock()
	if hosts == nil {
		return NodeHost{}, errNoNodeHosts
	}
	node, err := r.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return NodeHost{}, fmt.Errorf("the pod's node %q: %w", name, err)
	}
	h, ok := hosts(node)
	if !ok {
		return NodeHost{}, fmt.Errorf("node %s has no host here (no instance behind it)", name)
	}
	return h, nil
}

// dcgmExporterTimeout bounds one read of the node's GPUs; dcgm-exporter's own collection interval
// is 30 s by default, and a scrape never waits that long.
const dcgmExporterTimeout = 10 * time.Second

// serveDCGMExporter plays a dcgm-exporter pod: /metrics answers what the node's GPUs report
// (NodeHost.DCGMMetricsURL) and /health answers 200, the paths and port the container serves
// (https://github.com/NVIDIA/dcgm-exporter: --address :9400, /metrics and /health).
func serveDCGMExporter(ctx context.Context, p *podRun) (http.Handler, error) {
	host, err := p.host(ctx)
	if err != nil {
		return nil, err
	}
	if host.DCGMMetricsURL == "" {
		return nil, fmt.Errorf("node %s has no GPU telemetry (NodeHost.DCGMMetricsURL)", p.pod.Spec.NodeName)
	}
	client := &http.Client{Timeout: dcgmExporterTimeout}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, host.DCGMMetricsURL, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, "reading the GPUs: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
	return mux, nil
}

// prepareGPUHealthAgent plays a gpu-health-agent pod: the container's arguments with the service
// account's kubeconfig (the program's -kubeconfig, for the in-cluster configuration it would read
// from the kubelet's mounts), the container's environment as the kubelet resolves it (NODE_NAME
// from the downward API), and the node's host as the host network has it: the metadata service
// and the cloud's API where the node reaches them (the agent's METADATA_ENDPOINT and
// CLOUD_ENDPOINT), and pod IPs through the pod network (HTTP_PROXY: the exporter's pod IP; the
// metadata service, the API server and the emulator are on loopback, which Go never proxies).
func prepareGPUHealthAgent(ctx context.Context, p *podRun) (launch, error) {
	if !p.pod.Spec.HostNetwork {
		return launch{}, errors.New("the pod is not on the host network: the agent reads the instance metadata service, which pods off it do not reach")
	}
	host, err := p.host(ctx)
	if err != nil {
		return launch{}, err
	}
	env, err := containerEnv(p.pod, p.container)
	if err != nil {
		return launch{}, err
	}
	env = append(env, "METADATA_ENDPOINT="+host.MetadataEndpoint, "CLOUD_ENDPOINT="+host.CloudEndpoint, "HTTP_PROXY="+p.hostProxy)
	return launch{args: append([]string{"-kubeconfig=" + p.kubeconfig}, p.container.Args...), env: env}, nil
}

// containerEnv is the container's env as NAME=value, a literal value or a downward API field the
// kubelet fills (https://kubernetes.io/docs/concepts/workloads/pods/downward-api/); any other
// source is refused, so a manifest that needs more fails here rather than running half set up.
func containerEnv(pod *corev1.Pod, c corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			if e.ValueFrom.FieldRef == nil {
				return nil, fmt.Errorf("env %s: only values and downward API fields are played here", e.Name)
			}
			switch e.ValueFrom.FieldRef.FieldPath {
			case "spec.nodeName":
				v = pod.Spec.NodeName
			case "metadata.name":
				v = pod.Name
			case "metadata.namespace":
				v = pod.Namespace
			case "status.podIP":
				v = pod.Status.PodIP
			default:
				return nil, fmt.Errorf("env %s: downward API field %s is not played here", e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}
