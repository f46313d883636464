package gpuhealthagent

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Exporter finds the node's dcgm-exporter pod and reads its metrics. The agent runs on the host
// network and dcgm-exporter on the pod network without a host port, so the agent reads it at
// the pod's IP, which the node reaches directly; the pod is looked up every round, so an
// exporter that restarts with a new IP is followed.
type Exporter struct {
	Client    kubernetes.Interface
	Node      string
	Namespace string
	// Selector is the exporter pods' label selector, such as app.kubernetes.io/name=dcgm-exporter.
	Selector string
	Port     int
	HTTP     *http.Client
}

// Metrics answers the exporter's text exposition; an error when the node has no running exporter
// pod, so the round changes nothing.
func (e Exporter) Metrics(ctx context.Context) (string, error) {
	pods, err := e.Client.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: e.Selector, FieldSelector: "spec.nodeName=" + e.Node})
	if err != nil {
		return "", fmt.Errorf("finding dcgm-exporter on node %s: %w", e.Node, err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			return Fetch(ctx, e.HTTP, "http://"+net.JoinHostPort(p.Status.PodIP, strconv.Itoa(e.Port))+"/metrics")
		}
	}
	return "", fmt.Errorf("no running pod %s in namespace %s on node %s", e.Selector, e.Namespace, e.Node)
}

// Fetch answers the body of a GET of url (at most 16 MiB); an error for any status but 200.
func Fetch(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(body), nil
}
