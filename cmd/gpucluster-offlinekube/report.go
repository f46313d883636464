package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterreport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// report is `gpucluster-offlinekube report`: it waits until every instance the emulator's node
// agent reports is a Ready node and every validation pod has run on a GPU node, then prints
// exactly one line, "kubernetes: R/N nodes Ready, S/P validation pods scheduled on GPU nodes",
// and below it the reason for each node or pod that is not. Exit status 1 when it did not
// converge in time.
func report(args []string) int {
	fs := flag.NewFlagSet("gpucluster-offlinekube report", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig the cluster printed (required)")
	emulatorURL := fs.String("emulator", "", "the emulator's URL; it runs the node agent (--kubeconfig) (required)")
	wait := fs.Duration("wait", 3*time.Minute, "how long to wait for the nodes and the validation pods")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" || *emulatorURL == "" {
		fmt.Fprintln(os.Stderr, "report: --kubeconfig and --emulator are required")
		return 2
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		return 1
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait)
	defer cancel()
	sum, err := clusterreport.Wait(ctx, client, func() ([]clusterreport.Instance, error) {
		return agentInstances(ctx, strings.TrimSuffix(*emulatorURL, "/")+emulator.NodesPath)
	}, 0)
	fmt.Println(sum.Line())
	for _, r := range sum.Reasons {
		fmt.Println("  " + r)
	}
	if err != nil {
		return 1
	}
	return 0
}

// agentInstances reads the node agent's verdict on every Running instance.
func agentInstances(ctx context.Context, url string) ([]clusterreport.Instance, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s (is the emulator running with --kubeconfig?)", url, resp.Status)
	}
	var body struct {
		Nodes []clusterreport.Instance `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return body.Nodes, nil
}
