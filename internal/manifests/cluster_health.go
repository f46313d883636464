package manifests

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// What the cluster-health alerts (internal/alerting cluster_health.go) read: the API server's own
// metrics, and a count of the ERROR lines in each node's bootstrap log.

// The in-cluster credentials every pod with a service account token has
// (https://kubernetes.io/docs/tasks/run-application/access-api-from-pod/).
const (
	serviceAccountCA    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
	serviceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"
)

// apiServerScrape scrapes every API server behind the default namespace's kubernetes Service
// over HTTPS with Prometheus' service account, as job "apiserver" (the job the latency alert
// selects on). The API server serves /metrics to whoever may GET that non-resource URL
// (apiServerMetricsRule).
func apiServerScrape() promScrape {
	return promScrape{JobName: "apiserver", Scheme: "https",
		TLSConfig:     &promTLS{CAFile: serviceAccountCA},
		Authorization: &promAuthorization{CredentialsFile: serviceAccountToken},
		KubernetesSD:  []promKubeSD{{Role: "endpointslice", Namespaces: map[string][]string{"names": {"default"}}}},
		RelabelConfig: []promRelabel{
			{SourceLabels: []string{"__meta_kubernetes_service_name", "__meta_kubernetes_endpointslice_port_name"}, Regex: "kubernetes;https", Action: "keep"},
		}}
}

// apiServerMetricsRule lets Prometheus read the API server's /metrics
// (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#referring-to-resources: a
// non-resource URL is granted by nonResourceURLs).
var apiServerMetricsRule = rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}

// Where the log counter's sidecar writes and node-exporter's textfile collector reads
// (https://github.com/prometheus/node_exporter#textfile-collector: *.prom files in
// --collector.textfile.directory, written to a temporary name and renamed, so a scrape never
// reads half a file). The collector reads two directories: the sidecar's (an emptyDir, textfileDir)
// and the host's bootstrap.TextfileDir (read-only, hostTextfileDir), where the node's own scripts
// write (the certificates' expiry). The flag is a glob over both: node-exporter expands it with
// filepath.Glob since v1.2.0 (https://github.com/prometheus/node_exporter/pull/1985; the v1.8.2
// source, https://github.com/prometheus/node_exporter/blob/v1.8.2/collector/textfile.go). Two
// directories rather than one hostPath both write to: the sidecar runs as nobody, and a host
// directory the kubelet creates is root's.
const (
	textfileDir     = "/textfile/pod"
	hostTextfileDir = "/textfile/host"
	textfileGlob    = "/textfile/*"
	logDir          = "/host/log"
	logCountSeconds = 30
)

// logErrorCounter is a sidecar of the node-exporter DaemonSet that counts the lines containing
// ERROR in the node's bootstrap log every logCountSeconds and writes them as
// alerting.MetricLogErrorLines. It runs the node-exporter image itself, which is built on
// Prometheus' busybox image (https://github.com/prometheus/node_exporter/blob/master/Dockerfile)
// and so has sh and grep: no further image to pin and mirror. A missing log (a node booted
// before it existed, or rotated away) counts 0, which increase() reads as a counter reset.
func logErrorCounter(o Options) corev1.Container {
	log := path.Join(logDir, path.Base(bootstrap.LogPath))
	out := path.Join(textfileDir, "gpu_cluster_log.prom")
	script := fmt.Sprintf(`while :; do
  n=$(grep -c ERROR %[1]s 2>/dev/null) || n=0
  printf '# HELP %[2]s Lines containing ERROR in %[3]s.\n# TYPE %[2]s counter\n%[2]s %%s\n' "$n" >%[4]s.tmp && mv %[4]s.tmp %[4]s
  sleep %[5]d
done`, log, alerting.MetricLogErrorLines, bootstrap.LogPath, out, logCountSeconds)
	return corev1.Container{
		Name: "log-errors", Image: images.RefIn(images.NodeExporter, o.ImageRegistry), SecurityContext: hardened(), Resources: footprint("5m", "8Mi", "32Mi"),
		Command:      []string{"/bin/sh", "-c", script},
		VolumeMounts: []corev1.VolumeMount{{Name: "log", MountPath: logDir, ReadOnly: true}, {Name: "textfile", MountPath: textfileDir}},
	}
}

// logErrorVolumes are the host's log directory (read-only), the directory the sidecar and
// node-exporter share, and the host's textfile directory (created if missing: a node booted before
// it existed then reports nothing from it, rather than keeping node-exporter from starting).
func logErrorVolumes() []corev1.Volume {
	return []corev1.Volume{hostPathVolume("log", path.Dir(bootstrap.LogPath), corev1.HostPathDirectory), emptyDir("textfile"),
		hostPathVolume("host-textfile", bootstrap.TextfileDir, corev1.HostPathDirectoryOrCreate)}
}
