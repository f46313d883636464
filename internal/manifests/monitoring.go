package manifests

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// MonitoringNamespace holds the monitoring stack: Prometheus, Alertmanager, Grafana,
// node-exporter and prometheus-adapter.
const MonitoringNamespace = "monitoring"

// Ports the monitoring stack listens on (each component's upstream default).
const (
	prometheusPort   int32 = 9090
	alertmanagerPort int32 = 9093
	grafanaPort      int32 = 3000
	nodeExporterPort int32 = 9100
	adapterPort      int32 = 6443
)

// Names of the monitoring objects; Service names are what the other components' configs point at.
const (
	prometheusName   = "prometheus"
	alertmanagerName = "alertmanager"
	grafanaName      = "grafana"
	nodeExporterName = "node-exporter"
	adapterName      = "prometheus-adapter"
)

func svcURL(name string, port int32) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", name, MonitoringNamespace, port)
}

// controlPlaneToleration lets the monitoring stack run on control-plane nodes: a cluster may have
// no untainted node at all (GPU workers carry the GPU taint), and GPU nodes are for GPU work.
func controlPlaneToleration() corev1.Toleration {
	return corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
}

// nonRoot is the pod security context of the stack's images, which all run as nobody (Grafana as
// its own uid 472); fsGroup makes emptyDir volumes writable.
func nonRoot(uid int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: &uid, RunAsGroup: &uid, FSGroup: &uid}
}

func hardened() *corev1.SecurityContext {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

// footprint requests CPU and memory and caps memory: the stack may share a control-plane node with
// etcd and the API server, and a Prometheus that grows without bound must be killed before they are.
func footprint(cpu, memory, memoryLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memoryLimit)},
	}
}

func readyProbe(path string, port int32, scheme corev1.URIScheme) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port), Scheme: scheme}},
		InitialDelaySeconds: 10, PeriodSeconds: 10, FailureThreshold: 6}
}

// deployment is a one-replica Deployment of one container on a control-plane-tolerating pod.
func deployment(name, sa string, uid int64, c corev1.Container, vols []corev1.Volume) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": name}
	c.Name = name
	c.SecurityContext = hardened()
	return &appsv1.Deployment{
		TypeMeta: tm("apps/v1", "Deployment"), ObjectMeta: meta(name, MonitoringNamespace, nil),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			// Recreate: the emptyDir-backed stores are not shared, and two Prometheus would both alert.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{ServiceAccountName: sa, AutomountServiceAccountToken: ptr(sa != ""),
					SecurityContext: nonRoot(uid), Tolerations: []corev1.Toleration{controlPlaneToleration()},
					Containers: []corev1.Container{c}, Volumes: vols},
			},
		},
	}
}

func service(name string, port, target int32) *corev1.Service {
	return &corev1.Service{TypeMeta: tm("v1", "Service"), ObjectMeta: meta(name, MonitoringNamespace, nil),
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/name": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(target)}}}}
}

func configMapVolume(name, cm string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func serviceAccount(name, ns string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(name, ns, nil)}
}

func clusterRoleBinding(name, role, sa string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: meta(name, "", nil),
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: MonitoringNamespace}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role}}
}

// readOnly is get/list/watch on core resources, what Prometheus discovery and the adapter read.
func readOnly(name string, resources ...string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(name, "", nil),
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "list", "watch"}}}}
}

// monitoring is the whole stack, in apply order (RBAC and ConfigMaps before the pods using them).
func monitoring(o Options, th alerting.Thresholds) ([]object, error) {
	var objs []object
	for _, part := range []func(Options, alerting.Thresholds) ([]object, error){prometheus, alertmanager, grafana, nodeExporter, prometheusAdapter} {
		p, err := part(o, th)
		if err != nil {
			return nil, err
		}
		objs = append(objs, p...)
	}
	return objs, nil
}

// Prometheus configuration (prometheus.io/docs/prometheus/latest/configuration/configuration/):
// only the fields used here.
type promConfig struct {
	Global        map[string]string `json:"global"`
	Alerting      promAlerting      `json:"alerting"`
	RuleFiles     []string          `json:"rule_files"`
	ScrapeConfigs []promScrape      `json:"scrape_configs"`
}

type promAlerting struct {
	Alertmanagers []promStatic `json:"alertmanagers"`
}

type promStatic struct {
	StaticConfigs []map[string][]string `json:"static_configs"`
}

type promScrape struct {
	JobName       string             `json:"job_name"`
	HonorLabels   bool               `json:"honor_labels,omitempty"`
	Scheme        string             `json:"scheme,omitempty"`
	TLSConfig     *promTLS           `json:"tls_config,omitempty"`
	Authorization *promAuthorization `json:"authorization,omitempty"`
	KubernetesSD  []promKubeSD       `json:"kubernetes_sd_configs"`
	RelabelConfig []promRelabel      `json:"relabel_configs"`
}

type promTLS struct {
	CAFile string `json:"ca_file"`
}

type promAuthorization struct {
	CredentialsFile string `json:"credentials_file"`
}

type promKubeSD struct {
	Role       string              `json:"role"`
	Namespaces map[string][]string `json:"namespaces"`
}

type promRelabel struct {
	SourceLabels []string `json:"source_labels,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Action       string   `json:"action,omitempty"`
	TargetLabel  string   `json:"target_label,omitempty"`
	Replacement  string   `json:"replacement,omitempty"`
}

// PrometheusRulesFile is the rule file's name in the Prometheus ConfigMap.
const PrometheusRulesFile = "gpu-rules.yaml"

// prometheusConfig scrapes dcgm-exporter (pods behind its Service in the GPU namespace, with
// honor_labels so its pod/namespace labels survive: the alert rules and prometheus-adapter select
// on them) and node-exporter (its pods on every node), loads the scenario's rules and sends alerts
// to the Alertmanager Service.
func prometheusConfig(o Options) promConfig {
	node := promRelabel{SourceLabels: []string{"__meta_kubernetes_pod_node_name"}, TargetLabel: "node"}
	return promConfig{
		Global:   map[string]string{"scrape_interval": "30s", "evaluation_interval": "30s"},
		Alerting: promAlerting{Alertmanagers: []promStatic{{StaticConfigs: []map[string][]string{{"targets": {fmt.Sprintf("%s.%s.svc:%d", alertmanagerName, MonitoringNamespace, alertmanagerPort)}}}}}},
		// Relative: Prometheus (and promtool in the tests) resolve it next to prometheus.yml.
		RuleFiles: []string{PrometheusRulesFile},
		ScrapeConfigs: []promScrape{
			{JobName: "dcgm-exporter", HonorLabels: true,
				// EndpointSlices, not Endpoints: the Endpoints API is deprecated since Kubernetes 1.33.
				KubernetesSD: []promKubeSD{{Role: "endpointslice", Namespaces: map[string][]string{"names": {o.Namespace}}}},
				RelabelConfig: []promRelabel{
					{SourceLabels: []string{"__meta_kubernetes_service_name", "__meta_kubernetes_endpointslice_port_name"}, Regex: "dcgm-exporter;metrics", Action: "keep"},
					node,
				}},
			{JobName: "node-exporter",
				KubernetesSD: []promKubeSD{{Role: "pod", Namespaces: map[string][]string{"names": {MonitoringNamespace}}}},
				RelabelConfig: []promRelabel{
					{SourceLabels: []string{"__meta_kubernetes_pod_label_app_kubernetes_io_name", "__meta_kubernetes_pod_container_port_name"}, Regex: nodeExporterName + ";metrics", Action: "keep"},
					// The rules' network summary names {{ $labels.instance }}: the node, not its IP.
					{SourceLabels: []string{"__meta_kubernetes_pod_node_name"}, TargetLabel: "instance"},
					node,
				}},
			apiServerScrape(),
		},
	}
}

func prometheus(o Options, th alerting.Thresholds) ([]object, error) {
	cfg, err := marshal(prometheusConfig(o))
	if err != nil {
		return nil, err
	}
	rules, err := alerting.RulesYAML(th)
	if err != nil {
		return nil, err
	}
	name := prometheusName
	role := readOnly(name, "nodes", "services", "pods")
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		apiServerMetricsRule)
	cm := &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(name, MonitoringNamespace, nil),
		Data: map[string]string{"prometheus.yml": cfg, PrometheusRulesFile: rules}}
	dep := deployment(name, name, 65534, corev1.Container{
		Image: images.RefIn(images.Prometheus, o.ImageRegistry), Resources: footprint("200m", "512Mi", "2Gi"),
		// 15 days on an emptyDir: enough to see a week's training runs; the store is lost when the pod moves.
		Args:           []string{"--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus", "--storage.tsdb.retention.time=15d"},
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: prometheusPort}},
		ReadinessProbe: readyProbe("/-/ready", prometheusPort, corev1.URISchemeHTTP),
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/prometheus"}, {Name: "data", MountPath: "/prometheus"}},
	}, []corev1.Volume{configMapVolume("config", name), emptyDir("data")})
	return []object{serviceAccount(name, MonitoringNamespace), role, clusterRoleBinding(name, name, name), cm, dep, service(name, prometheusPort, prometheusPort)}, nil
}

func alertmanager(o Options, th alerting.Thresholds) ([]object, error) {
	cfg, err := alerting.AlertmanagerYAML(th)
	if err != nil {
		return nil, err
	}
	name := alertmanagerName
	cm := &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(name, MonitoringNamespace, nil), Data: map[string]string{"alertmanager.yml": cfg}}
	dep := deployment(name, "", 65534, corev1.Container{
		Image: images.RefIn(images.Alertmanager, o.ImageRegistry), Resources: footprint("20m", "64Mi", "256Mi"),
		Args: []string{"--config.file=/etc/alertmanager/alertmanager.yml", "--storage.path=/alertmanager",
			// One replica: no gossip peers to find.
			"--cluster.listen-address="},
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: alertmanagerPort}},
		ReadinessProbe: readyProbe("/-/ready", alertmanagerPort, corev1.URISchemeHTTP),
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/alertmanager"}, {Name: "data", MountPath: "/alertmanager"}},
	}, []corev1.Volume{configMapVolume("config", name), emptyDir("data")})
	return []object{cm, dep, service(name, alertmanagerPort, alertmanagerPort)}, nil
}

// grafanaAdminPasswordFile is where Grafana's init container writes a random admin password;
// GF_SECURITY_ADMIN_PASSWORD__FILE makes Grafana read it. The password is in no manifest, no
// Terraform value and no Secret: it lives in the pod's memory-backed volume only, and a restart
// makes a new one. Viewers are anonymous and the login form is off, so no one needs it.
const grafanaAdminPasswordFile = "/run/grafana-admin/password"

func grafana(o Options, th alerting.Thresholds) ([]object, error) {
	dashboard, err := alerting.DashboardJSON(th)
	if err != nil {
		return nil, err
	}
	datasources, err := marshal(map[string]any{"apiVersion": 1, "datasources": []map[string]any{{
		"name": "Prometheus", "type": "prometheus", "uid": "prometheus", "access": "proxy", "isDefault": true,
		"url": svcURL(prometheusName, prometheusPort)}}})
	if err != nil {
		return nil, err
	}
	providers, err := marshal(map[string]any{"apiVersion": 1, "providers": []map[string]any{{
		"name": "gpucluster", "type": "file", "options": map[string]string{"path": "/var/lib/grafana/dashboards"}}}})
	if err != nil {
		return nil, err
	}
	name := grafanaName
	cm := &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(name, MonitoringNamespace, nil),
		Data: map[string]string{"datasources.yaml": datasources, "dashboards.yaml": providers, "gpu.json": dashboard}}
	item := func(key string) []corev1.KeyToPath { return []corev1.KeyToPath{{Key: key, Path: key}} }
	vol := func(volName, key string) corev1.Volume {
		v := configMapVolume(volName, name)
		v.ConfigMap.Items = item(key)
		return v
	}
	env := []corev1.EnvVar{
		{Name: "GF_AUTH_ANONYMOUS_ENABLED", Value: "true"}, {Name: "GF_AUTH_ANONYMOUS_ORG_ROLE", Value: "Viewer"},
		{Name: "GF_AUTH_DISABLE_LOGIN_FORM", Value: "true"}, {Name: "GF_AUTH_BASIC_ENABLED", Value: "false"},
		{Name: "GF_SECURITY_ADMIN_PASSWORD__FILE", Value: grafanaAdminPasswordFile},
		{Name: "GF_ANALYTICS_REPORTING_ENABLED", Value: "false"}, {Name: "GF_ANALYTICS_CHECK_FOR_UPDATES", Value: "false"},
	}
	mounts := []corev1.VolumeMount{
		{Name: "datasources", MountPath: "/etc/grafana/provisioning/datasources"}, {Name: "providers", MountPath: "/etc/grafana/provisioning/dashboards"},
		{Name: "dashboards", MountPath: "/var/lib/grafana/dashboards"}, {Name: "admin", MountPath: "/run/grafana-admin"},
	}
	dep := deployment(name, "", 472, corev1.Container{
		Image: images.RefIn(images.Grafana, o.ImageRegistry), Env: env, Resources: footprint("50m", "128Mi", "512Mi"),
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: grafanaPort}},
		ReadinessProbe: readyProbe("/api/health", grafanaPort, corev1.URISchemeHTTP),
		VolumeMounts:   mounts,
	}, []corev1.Volume{vol("datasources", "datasources.yaml"), vol("providers", "dashboards.yaml"), vol("dashboards", "gpu.json"),
		{Name: "admin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}})
	dep.Spec.Template.Spec.InitContainers = []corev1.Container{{
		Name: "admin-password", Image: images.RefIn(images.Grafana, o.ImageRegistry), SecurityContext: hardened(),
		Command:      []string{"/bin/sh", "-c", "umask 077; tr -dc A-Za-z0-9 </dev/urandom | head -c 32 >" + grafanaAdminPasswordFile},
		VolumeMounts: []corev1.VolumeMount{{Name: "admin", MountPath: "/run/grafana-admin"}},
	}}
	return []object{cm, dep, service(name, grafanaPort, grafanaPort)}, nil
}

// nodeExporter runs on every node, GPU workers and control plane included (it tolerates every
// taint), on the host network so its network counters are the node's.
func nodeExporter(o Options, _ alerting.Thresholds) ([]object, error) {
	name := nodeExporterName
	labels := map[string]string{"app.kubernetes.io/name": name}
	ds := &appsv1.DaemonSet{
		TypeMeta: tm("apps/v1", "DaemonSet"), ObjectMeta: meta(name, MonitoringNamespace, nil),
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true, HostPID: true, AutomountServiceAccountToken: ptr(false),
					SecurityContext: nonRoot(65534), PriorityClassName: "system-node-critical",
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name: name, Image: images.RefIn(images.NodeExporter, o.ImageRegistry), SecurityContext: hardened(), Resources: footprint("20m", "32Mi", "128Mi"),
						Args: []string{"--path.sysfs=/host/sys", "--path.rootfs=/host/root", fmt.Sprintf("--web.listen-address=:%d", nodeExporterPort),
							"--collector.textfile.directory=" + textfileGlob},
						Ports:          []corev1.ContainerPort{{Name: "metrics", ContainerPort: nodeExporterPort}},
						ReadinessProbe: readyProbe("/", nodeExporterPort, corev1.URISchemeHTTP),
						VolumeMounts: []corev1.VolumeMount{{Name: "sys", MountPath: "/host/sys", ReadOnly: true},
							{Name: "root", MountPath: "/host/root", ReadOnly: true, MountPropagation: ptr(corev1.MountPropagationHostToContainer)},
							{Name: "textfile", MountPath: textfileDir, ReadOnly: true}, {Name: "host-textfile", MountPath: hostTextfileDir, ReadOnly: true}},
					}, logErrorCounter(o)},
					Volumes: append([]corev1.Volume{hostPathVolume("sys", "/sys", corev1.HostPathDirectory), hostPathVolume("root", "/", corev1.HostPathDirectory)},
						logErrorVolumes()...),
				},
			},
		},
	}
	return []object{ds}, nil
}

// prometheusAdapter serves the GPU metrics of PrometheusAdapterConfig through the custom and
// external metrics APIs, which is where the HPA's Pods metric GPUUtilMetric comes from. It
// registers as an aggregated API (APIService) with a self-signed serving certificate it makes at
// start (--cert-dir), hence insecureSkipTLSVerify, as upstream's own deployment does.
func prometheusAdapter(o Options, _ alerting.Thresholds) ([]object, error) {
	name := adapterName
	o.Namespace = MonitoringNamespace
	cfg, err := adapterConfigMap(o)
	if err != nil {
		return nil, err
	}
	reader := readOnly(name, "nodes", "namespaces", "pods", "services")
	authReader := &rbacv1.RoleBinding{TypeMeta: tm("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(name+"-auth-reader", "kube-system", nil),
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: MonitoringNamespace}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "extension-apiserver-authentication-reader"}}
	dep := deployment(name, name, 65534, corev1.Container{
		Image: images.RefIn(images.PrometheusAdapter, o.ImageRegistry), Resources: footprint("50m", "128Mi", "512Mi"),
		Args: []string{"--prometheus-url=" + svcURL(prometheusName, prometheusPort) + "/", "--config=/etc/adapter/config.yaml",
			fmt.Sprintf("--secure-port=%d", adapterPort), "--cert-dir=/var/run/serving-cert", "--metrics-relist-interval=1m"},
		Ports:          []corev1.ContainerPort{{Name: "https", ContainerPort: adapterPort}},
		ReadinessProbe: readyProbe("/readyz", adapterPort, corev1.URISchemeHTTPS),
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/adapter"}, {Name: "cert", MountPath: "/var/run/serving-cert"}},
	}, []corev1.Volume{configMapVolume("config", AdapterConfigMapName), emptyDir("cert")})
	svc := service(name, 443, adapterPort)
	objs := []object{serviceAccount(name, MonitoringNamespace), reader, clusterRoleBinding(name, name, name),
		clusterRoleBinding(name+"-auth-delegator", "system:auth-delegator", name), authReader, cfg, dep, svc}
	for _, group := range []string{"custom.metrics.k8s.io", "external.metrics.k8s.io"} {
		objs = append(objs, &apiregv1.APIService{
			TypeMeta: tm("apiregistration.k8s.io/v1", "APIService"), ObjectMeta: meta("v1beta1."+group, "", nil),
			Spec: apiregv1.APIServiceSpec{Group: group, Version: "v1beta1", InsecureSkipTLSVerify: true,
				Service:              &apiregv1.ServiceReference{Name: name, Namespace: MonitoringNamespace, Port: ptr(int32(443))},
				GroupPriorityMinimum: 100, VersionPriority: 100},
		})
	}
	return objs, nil
}
