// Command gpucluster-gpu-health-agent runs internal/gpuhealthagent on one GPU node: every
// interval it reads the node's dcgm-exporter metrics and sets the node's GPUUnhealthy condition,
// its gpucluster.io/gpu-unhealthy taint and replacement request, and evicts the node's GPU pods
// while a GPU is out of service.
//
// It is meant to run as a DaemonSet pod on the GPU nodes, with NODE_NAME from the downward API and
// a service account that may get, update and update the status of nodes, list pods and create
// pods/eviction. -kubeconfig runs it from outside the cluster instead.
//
// For a GPU no reset mends it asks for a new instance once the node's GPU pods are gone, signing
// with the node's instance RAM role from the metadata service: the pod must run on the host
// network, since the bootstrap's metadata guard keeps pods off the service. -replace=false
// leaves the request at the node's annotation.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/ecsmetadata"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/gpuhealthagent"
)

func main() {
	node := flag.String("node", os.Getenv("NODE_NAME"), "the node this agent acts for (default $NODE_NAME)")
	metricsURL := flag.String("metrics-url", "", "dcgm-exporter's metrics on this node; empty: the node's exporter pod, found by -exporter-*")
	exporterNamespace := flag.String("exporter-namespace", "gpu-system", "the namespace of the dcgm-exporter pods")
	exporterSelector := flag.String("exporter-selector", "app.kubernetes.io/name=dcgm-exporter", "the label selector of the dcgm-exporter pods")
	// dcgm-exporter serves its metrics on :9400 at /metrics by default
	// (https://github.com/NVIDIA/dcgm-exporter, its --address flag).
	exporterPort := flag.Int("exporter-port", 9400, "the port of the dcgm-exporter pods")
	interval := flag.Duration("interval", 30*time.Second, "how often the GPUs are read")
	kubeconfig := flag.String("kubeconfig", "", "a kubeconfig file; empty: the pod's service account")
	replace := flag.Bool("replace", true, "ask the node's pool for a new instance for a GPU no reset mends")
	metadataEndpoint := flag.String("metadata-endpoint", envOr("METADATA_ENDPOINT", ecsmetadata.Endpoint),
		"the instance metadata service (default $METADATA_ENDPOINT or "+ecsmetadata.Endpoint+")")
	cloudEndpoint := flag.String("cloud-endpoint", os.Getenv("CLOUD_ENDPOINT"),
		"one base URL for the cloud APIs (default $CLOUD_ENDPOINT; empty: the vendor's endpoints of the instance's region)")
	flag.Parse()
	if *node == "" {
		log.Fatal("no node: set -node or NODE_NAME")
	}
	config, err := restConfig(*kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	httpClient := &http.Client{Timeout: 10 * time.Second}
	exporter := gpuhealthagent.Exporter{Client: client, Node: *node, Namespace: *exporterNamespace,
		Selector: *exporterSelector, Port: *exporterPort, HTTP: httpClient}
	agent := &gpuhealthagent.Agent{Client: client, Node: *node, Metrics: exporter.Metrics}
	if *metricsURL != "" {
		agent.Metrics = func(ctx context.Context) (string, error) { return gpuhealthagent.Fetch(ctx, httpClient, *metricsURL) }
	}
	if *replace {
		agent.Replacer = gpuhealthagent.InstanceReplacer{
			Metadata: ecsmetadata.Client{Endpoint: *metadataEndpoint}, CloudEndpoint: *cloudEndpoint}
	}
	agent.Run(ctx, *interval, func(res gpuhealthagent.Result, err error) {
		switch {
		case err != nil:
			log.Printf("round failed (the next round tries again): %v", err)
		case len(res.Findings) > 0:
			log.Printf("GPUs out of service: %+v; evicted %v; held by a PodDisruptionBudget %v; replacement asked: %v",
				res.Findings, res.Evicted, res.Blocked, res.Replaced)
		}
	})
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return rest.InClusterConfig()
}
