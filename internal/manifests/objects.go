package manifests

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

// GPUResource is the extended resource the device plugin advertises.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

func kindOf(obj object) (schema.GroupVersionKind, error) {
	k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind })
	if !ok {
		return schema.GroupVersionKind{}, fmt.Errorf("%T has no type metadata", obj)
	}
	gvk := k.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return schema.GroupVersionKind{}, fmt.Errorf("%T %s: apiVersion/kind not set", obj, obj.GetName())
	}
	return gvk, nil
}

func tm(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func meta(name, namespace string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "gpucluster", "app.kubernetes.io/managed-by": "terraform-provider-gpucluster"}
	maps.Copy(l, labels)
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: l}
}

func ptr[T any](v T) *T { return &v }

// gpuNodeSelector selects the pool's GPU workers by the label bootstrap sets.
func gpuNodeSelector() map[string]string {
	return map[string]string{bootstrap.NodeRoleLabel: bootstrap.RoleLabelValue(bootstrap.RoleGPUWorker)}
}

// gpuToleration tolerates the GPU taint bootstrap puts on workers.
func gpuToleration() corev1.Toleration {
	return corev1.Toleration{Key: bootstrap.GPUTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(bootstrap.GPUTaintEffect)}
}

func gpuLimits(n int) corev1.ResourceRequirements {
	q := resource.MustParse(fmt.Sprint(n))
	return corev1.ResourceRequirements{Limits: corev1.ResourceList{GPUResource: q}}
}

func ncclEnv(o Options) []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, k := range slices.Sorted(maps.Keys(o.NCCLEnv)) {
		env = append(env, corev1.EnvVar{Name: k, Value: o.NCCLEnv[k]})
	}
	return env
}

func hostPathVolume(name, path string, t corev1.HostPathType) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &t}}}
}

func namespaces(o Options) []object {
	var out []object
	for _, ns := range slices.Compact([]string{o.Namespace, o.WorkloadNamespace}) {
		if ns == "default" || strings.HasPrefix(ns, "kube-") {
			continue
		}
		n := &corev1.Namespace{TypeMeta: tm("v1", "Namespace"), ObjectMeta: meta(ns, "", nil)}
		out = append(out, n)
	}
	return out
}

// devicePlugin is the NVIDIA device plugin DaemonSet. FAIL_ON_INIT_ERROR is true (the plugin's
// own default, https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/customizing.md,
// "--fail-on-init-error / $FAIL_ON_INIT_ERROR, default true"): it runs on GPU nodes only, and
// there a driver it cannot initialise must crash it where kubectl shows it, not leave a node that
// advertises no GPUs (or stale ones) without a word. It has no liveness probe on purpose: it
// serves no health endpoint, and it already re-registers with the kubelet when the kubelet's
// socket is recreated; a probe on its own socket would restart it in exactly the window where it
// is re-registering.
func devicePlugin(o Options) object {
	name := "nvidia-device-plugin"
	ds := gpuDaemonSet(name, o.Namespace, corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: name, Image: o.Images.DevicePlugin,
			Env:             []corev1.EnvVar{{Name: "FAIL_ON_INIT_ERROR", Value: "true"}, {Name: "DEVICE_LIST_STRATEGY", Value: "envvar"}},
			SecurityContext: hardened(),
			VolumeMounts:    []corev1.VolumeMount{{Name: "device-plugin", MountPath: "/var/lib/kubelet/device-plugins"}},
		}},
		Volumes: []corev1.Volume{hostPathVolume("device-plugin", "/var/lib/kubelet/device-plugins", corev1.HostPathDirectory)},
	})
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}
	return ds
}

// gpuDaemonSet is a DaemonSet of pod on the GPU workers only: their node selector, the GPU taint
// tolerated (before any toleration pod brings), node-critical priority (a GPU node's agents must
// not be the pods the kubelet evicts first), and the name label as its selector.
func gpuDaemonSet(name, namespace string, pod corev1.PodSpec) *appsv1.DaemonSet {
	labels := map[string]string{"app.kubernetes.io/name": name}
	pod.NodeSelector = gpuNodeSelector()
	pod.Tolerations = append([]corev1.Toleration{gpuToleration()}, pod.Tolerations...)
	pod.PriorityClassName = "system-node-critical"
	return &appsv1.DaemonSet{
		TypeMeta: tm("apps/v1", "DaemonSet"), ObjectMeta: meta(name, namespace, nil),
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
}

const dcgmPort = 9400

// dcgmExporter is the dcgm-exporter DaemonSet, in Kubernetes mode so that each GPU's series
// carries the namespace and pod that hold it (from the kubelet's pod-resources API).
func dcgmExporter(o Options) object {
	name := "dcgm-exporter"
	probe := func(delay int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(dcgmPort)}},
			InitialDelaySeconds: delay, PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: 6,
		}
	}
	return gpuDaemonSet(name, o.Namespace, corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: name, Image: o.Images.DCGMExporter,
			Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: dcgmPort}},
			Env: []corev1.EnvVar{
				{Name: "DCGM_EXPORTER_KUBERNETES", Value: "true"},
				{Name: "DCGM_EXPORTER_LISTEN", Value: fmt.Sprintf(":%d", dcgmPort)},
				// The nvidia runtime is the node's default; without a GPU request the pod
				// must still see every GPU to watch it.
				{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"},
			},
			SecurityContext: &corev1.SecurityContext{
				RunAsNonRoot: ptr(false), RunAsUser: ptr(int64(0)),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}},
			},
			LivenessProbe:  probe(45),
			ReadinessProbe: probe(45),
			VolumeMounts:   []corev1.VolumeMount{{Name: "pod-resources", MountPath: "/var/lib/kubelet/pod-resources", ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{hostPathVolume("pod-resources", "/var/lib/kubelet/pod-resources", corev1.HostPathDirectory)},
	})
}

// dcgmService exposes the exporter for Prometheus. Scrape it with honor_labels: true, or the
// scrape target's own pod/namespace labels push dcgm-exporter's to exported_pod/exported_namespace
// and the per-pod rules see nothing.
func dcgmService(o Options) object {
	name := "dcgm-exporter"
	m := meta(name, o.Namespace, nil)
	m.Annotations = map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": fmt.Sprint(dcgmPort), "prometheus.io/path": "/metrics"}
	return &corev1.Service{
		TypeMeta: tm("v1", "Service"), ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/name": name},
			Ports:    []corev1.ServicePort{{Name: "metrics", Port: dcgmPort, TargetPort: intstr.FromString("metrics")}},
		},
	}
}

// antiAffinity keeps replicas of one group on different nodes: each replica gets a node's whole
// NVLink domain and the ranks meet over the network, which is what the all-reduce is sized for.
func antiAffinity(group string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{ReplicaGroupLabel: group}},
			TopologyKey:   "kubernetes.io/hostname",
		}},
	}}
}

// TrainingTemplateName is the PodTemplate users copy from.
const TrainingTemplateName = "gpu-training-replica"

// trainingTemplate is a PodTemplate for one training replica: a whole node's GPUs, the GPU
// toleration, anti-affinity against its siblings, the NCCL environment, shared memory for NCCL,
// the reaper opt-in, activeDeadlineSeconds at MaxRuntime and a liveness probe on a heartbeat
// file. A `pgrep python` liveness probe, the usual first try, passes while a rank hangs in a collective, which is
// the failure that matters; a heartbeat the training loop touches every step does not.
func trainingTemplate(o Options) object {
	group := "example-job"
	deadline := int64(o.MaxRuntime.Seconds())
	return &corev1.PodTemplate{
		TypeMeta:   tm("v1", "PodTemplate"),
		ObjectMeta: meta(TrainingTemplateName, o.WorkloadNamespace, nil),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{ReplicaGroupLabel: group, ReapLabel: "true"}},
			Spec: corev1.PodSpec{
				NodeSelector:          gpuNodeSelector(),
				Tolerations:           []corev1.Toleration{gpuToleration()},
				Affinity:              antiAffinity(group),
				ActiveDeadlineSeconds: &deadline,
				// With eRDMA the NCCL interface settings name the node's own devices, which only the
				// host network namespace sees (see poolAllReduce).
				HostNetwork:   usesRDMA(o),
				DNSPolicy:     dnsPolicyFor(usesRDMA(o)),
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "trainer", Image: o.Images.NCCLTests,
					Command:         []string{"/bin/sh", "-c", "echo 'replace with the training command; it must touch " + HeartbeatFile + " every step'; sleep infinity"},
					Env:             append(ncclEnv(o), rdmaEnv(o)...),
					SecurityContext: rdmaSecurityContext(o),
					Resources: func() corev1.ResourceRequirements {
						r := gpuLimits(o.GPUsPerNode)
						return r
					}(),
					LivenessProbe: &corev1.Probe{
						ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
							"/bin/sh", "-c", fmt.Sprintf("test -n \"$(find %s -mmin -10 2>/dev/null)\"", HeartbeatFile)}}},
						InitialDelaySeconds: 900, PeriodSeconds: 60, TimeoutSeconds: 10, FailureThreshold: 3,
					},
					VolumeMounts: []corev1.VolumeMount{{Name: "heartbeat", MountPath: "/var/run/gpucluster"}, {Name: "dshm", MountPath: "/dev/shm"}},
				}},
				Volumes: []corev1.Volume{
					{Name: "heartbeat", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
				},
			},
		},
	}
}

// dnsPolicyFor keeps cluster DNS names resolvable in a pod on the host network.
func dnsPolicyFor(hostNetwork bool) corev1.DNSPolicy {
	if hostNetwork {
		return corev1.DNSClusterFirstWithHostNet
	}
	return corev1.DNSClusterFirst
}

// AntiAffinityYAML is the anti-affinity stanza alone, for pod specs users write themselves.
func AntiAffinityYAML(group string) (string, error) {
	return marshal(antiAffinity(group))
}

// hpa scales a Deployment on the average GPU utilisation of its pods, a Pods metric that
// prometheus-adapter serves from DCGM_FI_DEV_GPU_UTIL. A Resource metric on nvidia.com/gpu (what
// many examples show) does not work: Resource metrics come from metrics-server and cover only cpu
// and memory; nvidia.com/gpu is an extended resource with a count, not a usage.
func hpa(o Options) object {
	h := o.HPA
	target := resource.MustParse(fmt.Sprint(h.TargetPercent))
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   tm("autoscaling/v2", "HorizontalPodAutoscaler"),
		ObjectMeta: meta(h.Deployment+"-gpu", o.WorkloadNamespace, nil),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: h.Deployment},
			MinReplicas:    &h.MinReplicas, MaxReplicas: h.MaxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.PodsMetricSourceType,
				Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: GPUUtilMetric},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &target},
				},
			}},
			// GPU pods start slowly (image pull, model load): scale down only after 10 minutes
			// of low utilisation, one pod at a time.
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: ptr(int32(600)),
					Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 300}},
				},
			},
		},
	}
}

// ReaperName names the idle reaper's CronJob (and its RBAC and ConfigMap).
const ReaperName = "gpu-idle-reaper"

// ReaperNamespacesName names the ConfigMap (in the reaper's namespace) that lists the team
// namespaces the reaper visits besides the workload namespace, space-separated under key
// ReaperNamespacesKey, which the CronJob takes as an environment variable. RenderMPI renders it
// with the teams' Roles; the add-ons alone do not know the teams, so it is optional.
const (
	ReaperNamespacesName = ReaperName + "-teams"
	ReaperNamespacesKey  = "TEAM_NAMESPACES"
)

// reaperAccess is the Role and RoleBinding that let the reaper's ServiceAccount (in saNamespace)
// make its script's calls in namespace: list and delete the opted-in pods, delete their Jobs
// (nothing more: the script never reads one object).
func reaperAccess(saNamespace, namespace string) []object {
	role := &rbacv1.Role{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(ReaperName, namespace, nil),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "delete"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"delete"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(ReaperName, namespace, nil),
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: ReaperName, Namespace: saNamespace}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: ReaperName},
	}
	return []object{role, binding}
}

// reaper is the idle-workload reaper: a CronJob that reclaims opted-in workloads running longer
// than MaxRuntime. Pods owned by a Job are reclaimed by deleting the Job (deleting the pod alone
// would make the Job start another); bare pods are deleted; pods of Deployments and StatefulSets
// are reported and left alone (their controller would recreate them).
func reaper(o Options) []object {
	name := ReaperName
	sa := &corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(name, o.Namespace, nil)}
	script := &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(name, o.Namespace, nil),
		Data: map[string]string{"reaper.py": ReaperScript}}
	cron := &batchv1.CronJob{
		TypeMeta: tm("batch/v1", "CronJob"), ObjectMeta: meta(name, o.Namespace, nil),
		Spec: batchv1.CronJobSpec{
			Schedule: "*/15 * * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent,
			// Three successful runs kept is the default (CronJobSpec.successfulJobsHistoryLimit,
			// https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#jobs-history-limits).
			FailedJobsHistoryLimit: ptr(int32(3)),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr(int32(1)), ActiveDeadlineSeconds: ptr(int64(600)),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					ServiceAccountName: name, RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "reaper", Image: o.Images.Reaper,
						Command: []string{"python3", "/opt/reaper/reaper.py"},
						Env: []corev1.EnvVar{
							{Name: "TARGET_NAMESPACE", Value: o.WorkloadNamespace},
							{Name: "LABEL_SELECTOR", Value: ReapLabel + "=true"},
							{Name: "MAX_RUNTIME_SECONDS", Value: fmt.Sprint(int64(o.MaxRuntime.Seconds()))},
						},
						EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: ReaperNamespacesName}, Optional: ptr(true)}}},
						SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65534)), AllowPrivilegeEscalation: ptr(false),
							ReadOnlyRootFilesystem: ptr(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "script", MountPath: "/opt/reaper", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "script", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}},
				}},
			}},
		},
	}
	return append(append([]object{sa}, reaperAccess(o.Namespace, o.WorkloadNamespace)...), script, cron)
}

// ReaperScript lists opted-in pods through the API with the pod's service account and reclaims
// those older than MAX_RUNTIME_SECONDS, in TARGET_NAMESPACE and then in each of TEAM_NAMESPACES
// (space-separated; set from RenderMPI's ReaperNamespacesName ConfigMap when there are teams). Standard library only. API_SERVER and SA_DIR exist for
// tests.
const ReaperScript = `import datetime, json, os, ssl, urllib.error, urllib.parse, urllib.request

API = os.environ.get("API_SERVER", "https://kubernetes.default.svc")
SA = os.environ.get("SA_DIR", "/var/run/secrets/kubernetes.io/serviceaccount")
NS = os.environ["TARGET_NAMESPACE"]
SELECTOR = os.environ["LABEL_SELECTOR"]
MAX = int(os.environ["MAX_RUNTIME_SECONDS"])
DRY_RUN = os.environ.get("DRY_RUN") == "true"
TOKEN = open(os.path.join(SA, "token")).read().strip()
CTX = ssl.create_default_context(cafile=os.path.join(SA, "ca.crt")) if API.startswith("https:") else None


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(API + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=CTX, timeout=30) as resp:
        return json.load(resp)


def main():
    now = datetime.datetime.now(datetime.timezone.utc)
    pods = call("GET", "/api/v1/namespaces/%s/pods?labelSelector=%s" % (NS, urllib.parse.quote(SELECTOR)))["items"]
    done = set()
    for pod in pods:
        meta, status = pod["metadata"], pod.get("status", {})
        if status.get("phase") not in ("Pending", "Running") or not status.get("startTime"):
            continue
        started = datetime.datetime.fromisoformat(status["startTime"].replace("Z", "+00:00"))
        age = (now - started).total_seconds()
        if age < MAX:
            continue
        owners = [o for o in meta.get("ownerReferences", []) if o.get("controller")]
        if not owners:
            what, path = "pod " + meta["name"], "/api/v1/namespaces/%s/pods/%s" % (NS, meta["name"])
        elif owners[0]["kind"] == "Job":
            what, path = "job " + owners[0]["name"], "/apis/batch/v1/namespaces/%s/jobs/%s" % (NS, owners[0]["name"])
        else:
            print("skip pod %s: owned by %s %s, which would recreate it; limit its lifetime there" % (meta["name"], owners[0]["kind"], owners[0]["name"]))
            continue
        if path in done:
            continue
        done.add(path)
        print("reclaim %s in %s: running %.1f h, limit %.1f h%s" % (what, NS, age / 3600, MAX / 3600, " (dry run)" if DRY_RUN else ""))
        if DRY_RUN:
            continue
        try:
            call("DELETE", path, {"propagationPolicy": "Background"})
        except urllib.error.HTTPError as err:
            if err.code != 404:
                raise


for NS in [NS] + os.environ.get("TEAM_NAMESPACES", "").split():
    main()
`

// Prometheus-adapter configuration (github.com/kubernetes-sigs/prometheus-adapter, config.yaml).
type AdapterConfig struct {
	Rules         []AdapterRule `json:"rules"`
	ExternalRules []AdapterRule `json:"externalRules"`
}

// AdapterRule is one discovery rule.
type AdapterRule struct {
	SeriesQuery  string           `json:"seriesQuery"`
	Resources    AdapterResources `json:"resources"`
	Name         AdapterName      `json:"name"`
	MetricsQuery string           `json:"metricsQuery"`
}

// AdapterResources maps series labels to Kubernetes resources.
type AdapterResources struct {
	Overrides  map[string]AdapterGroupResource `json:"overrides,omitempty"`
	Namespaced *bool                           `json:"namespaced,omitempty"`
}

// AdapterGroupResource names a resource.
type AdapterGroupResource struct {
	Resource string `json:"resource"`
}

// AdapterName renames a series.
type AdapterName struct {
	Matches string `json:"matches"`
	As      string `json:"as"`
}

// PrometheusAdapterConfig serves DCGM_FI_DEV_GPU_UTIL as the Pods metric gpu_utilization (per
// pod, for the HPA) and the external metric gpu_pool_utilization (average over every GPU a pod
// holds, for autoscalers outside the namespace, such as a job queue).
func PrometheusAdapterConfig() AdapterConfig {
	return AdapterConfig{
		Rules: []AdapterRule{{
			SeriesQuery: `DCGM_FI_DEV_GPU_UTIL{namespace!="",pod!=""}`,
			Resources: AdapterResources{Overrides: map[string]AdapterGroupResource{
				"namespace": {Resource: "namespace"}, "pod": {Resource: "pod"},
			}},
			Name:         AdapterName{Matches: "^DCGM_FI_DEV_GPU_UTIL$", As: GPUUtilMetric},
			MetricsQuery: `avg(avg_over_time(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)`,
		}},
		ExternalRules: []AdapterRule{{
			SeriesQuery:  `DCGM_FI_DEV_GPU_UTIL{pod!=""}`,
			Resources:    AdapterResources{Namespaced: ptr(false)},
			Name:         AdapterName{Matches: "^DCGM_FI_DEV_GPU_UTIL$", As: GPUUtilPoolMetric},
			MetricsQuery: `avg(avg_over_time(<<.Series>>{<<.LabelMatchers>>}[5m]))`,
		}},
	}
}

// AdapterConfigMapName holds the adapter configuration; point prometheus-adapter's --config at
// its config.yaml key.
const AdapterConfigMapName = "prometheus-adapter-gpu"

func adapterConfigMap(o Options) (object, error) {
	cfg, err := marshal(PrometheusAdapterConfig())
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(AdapterConfigMapName, o.Namespace, nil),
		Data: map[string]string{"config.yaml": cfg}}, nil
}

// ncclTests validates every node of the pool: an Indexed Job with one pod per node (required
// anti-affinity) running all_reduce_perf over all the node's GPUs, which measures NVLink/PCIe
// bus bandwidth and the NCCL installation node by node. It fails when the average bus bandwidth
// is below MinBusBandwidthGBs. The all-reduce that spans nodes, and so tests the fabric between
// them, is poolAllReduce.
func ncclTests(o Options) []object {
	name := "nccl-tests-all-reduce"
	group := name
	labels := map[string]string{ReplicaGroupLabel: group, "app.kubernetes.io/name": name}
	check := fmt.Sprintf(`set -eu
all_reduce_perf -b 8 -e 4G -f 2 -g %d | tee /tmp/out.txt
bw=$(awk '/Avg bus bandwidth/ {print $NF}' /tmp/out.txt)
echo "node $NODE_NAME: average bus bandwidth ${bw} GB/s (minimum %g)"
awk -v bw="$bw" -v min=%g 'BEGIN { exit (bw + 0 >= min) ? 0 : 1 }'
`, o.GPUsPerNode, o.MinBusBandwidthGBs, o.MinBusBandwidthGBs)
	env := append(ncclEnv(o), corev1.EnvVar{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}})
	job := &batchv1.Job{
		TypeMeta: tm("batch/v1", "Job"), ObjectMeta: meta(name, o.WorkloadNamespace, nil),
		Spec: batchv1.JobSpec{
			CompletionMode: ptr(batchv1.IndexedCompletion),
			Completions:    ptr(int32(o.Nodes)), Parallelism: ptr(int32(o.Nodes)),
			BackoffLimit: ptr(int32(o.Nodes)), ActiveDeadlineSeconds: ptr(int64(3600)),
			TTLSecondsAfterFinished: ptr(int32(86400)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					NodeSelector:  gpuNodeSelector(),
					Tolerations:   []corev1.Toleration{gpuToleration()},
					Affinity:      antiAffinity(group),
					Containers: []corev1.Container{{
						Name: "all-reduce", Image: o.Images.NCCLTests,
						Command:      []string{"/bin/bash", "-c", check},
						Env:          env,
						Resources:    gpuLimits(o.GPUsPerNode),
						VolumeMounts: []corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}},
					}},
					Volumes: []corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}},
				},
			},
		},
	}
	return []object{job}
}

// hpcg runs NVIDIA's HPCG on every node of a simulation pool (memory-bandwidth-bound, like MD
// and CFD codes), one MPI rank per GPU inside the pod.
func hpcg(o Options) object {
	name := "hpcg"
	labels := map[string]string{ReplicaGroupLabel: name, "app.kubernetes.io/name": name}
	cmd := fmt.Sprintf("set -eu\ncd /workspace\nmpirun --allow-run-as-root --bind-to none -np %d ./hpcg.sh --dat ./hpcg-linux-x86_64/sample-dat/hpcg.dat\n", o.GPUsPerNode)
	return &batchv1.Job{
		TypeMeta: tm("batch/v1", "Job"), ObjectMeta: meta(name, o.WorkloadNamespace, nil),
		Spec: batchv1.JobSpec{
			CompletionMode: ptr(batchv1.IndexedCompletion),
			Completions:    ptr(int32(o.Nodes)), Parallelism: ptr(int32(o.Nodes)),
			BackoffLimit: ptr(int32(o.Nodes)), ActiveDeadlineSeconds: ptr(int64(7200)),
			TTLSecondsAfterFinished: ptr(int32(86400)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					NodeSelector:  gpuNodeSelector(),
					Tolerations:   []corev1.Toleration{gpuToleration()},
					Affinity:      antiAffinity(name),
					Containers: []corev1.Container{{
						Name: name, Image: o.Images.HPCG, Command: []string{"/bin/bash", "-c", cmd},
						Resources:    gpuLimits(o.GPUsPerNode),
						VolumeMounts: []corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}},
					}},
					Volumes: []corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}},
				},
			},
		},
	}
}

func marshal(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n") + "\n", nil
}

// PrometheusAdapterConfigYAML is PrometheusAdapterConfig as prometheus-adapter's config.yaml.
func PrometheusAdapterConfigYAML() (string, error) { return marshal(PrometheusAdapterConfig()) }
