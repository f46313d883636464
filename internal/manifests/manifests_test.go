package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// newObject returns an empty k8s.io/api object for an apiVersion and kind.
func newObject(t *testing.T, apiVersion, kind string) any {
	t.Helper()
	switch apiVersion + " " + kind {
	case "v1 Namespace":
		return &corev1.Namespace{}
	case "v1 Service":
		return &corev1.Service{}
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}
	case "v1 PodTemplate":
		return &corev1.PodTemplate{}
	case "apps/v1 DaemonSet":
		return &appsv1.DaemonSet{}
	case "batch/v1 Job":
		return &batchv1.Job{}
	case "batch/v1 CronJob":
		return &batchv1.CronJob{}
	case "rbac.authorization.k8s.io/v1 Role":
		return &rbacv1.Role{}
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		return &rbacv1.RoleBinding{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}
	case "rbac.authorization.k8s.io/v1 ClusterRole":
		return &rbacv1.ClusterRole{}
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		return &rbacv1.ClusterRoleBinding{}
	case "apiregistration.k8s.io/v1 APIService":
		return &apiregv1.APIService{}
	}
	t.Fatalf("no k8s.io/api type for %s %s", apiVersion, kind)
	return nil
}

// decodeAll strictly decodes every document of a multi-document stream into its k8s.io/api type:
// an unknown or duplicated field fails.
func decodeAll(t *testing.T, stream string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for i, doc := range strings.Split(stream, "---\n") {
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		obj := newObject(t, tm.APIVersion, tm.Kind)
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("document %d (%s %s): %v\n%s", i, tm.Kind, tm.Metadata.Name, err, doc)
		}
		key := tm.Kind + "/" + tm.Metadata.Name
		if _, dup := out[key]; dup {
			t.Fatalf("two documents named %s", key)
		}
		out[key] = obj
	}
	return out
}

func opts(scenario string) Options {
	return Options{Scenario: scenario, Nodes: 4, GPUsPerNode: 8, ERDMA: true,
		HPA: &HPA{Deployment: "inference", MinReplicas: 1, MaxReplicas: 4}}
}

func TestRenderPerScenario(t *testing.T) {
	common := []string{
		"Namespace/gpu-system", "Namespace/gpu-workloads",
		"DaemonSet/nvidia-device-plugin", "DaemonSet/dcgm-exporter", "Service/dcgm-exporter",
		"PodTemplate/" + TrainingTemplateName,
		"ServiceAccount/gpu-idle-reaper", "Role/gpu-idle-reaper", "RoleBinding/gpu-idle-reaper", "ConfigMap/gpu-idle-reaper", "CronJob/gpu-idle-reaper",
		"ConfigMap/" + AdapterConfigMapName, "HorizontalPodAutoscaler/inference-gpu", "Job/nccl-tests-all-reduce",
		"ConfigMap/" + PoolAllReduceName, "Service/" + PoolAllReduceName, "Job/" + PoolAllReduceName,
	}
	for _, sc := range catalog.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			docs, err := Render(opts(sc.Name))
			if err != nil {
				t.Fatal(err)
			}
			objs := decodeAll(t, Join(docs))
			want := slices.Clone(common)
			if sc.Name != catalog.ScenarioAITraining {
				want = append(want, "Job/hpcg")
			}
			var got []string
			for k := range objs {
				got = append(got, k)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("objects %v, want %v", got, want)
			}
			for _, d := range docs {
				if !strings.HasPrefix(d.YAML, "apiVersion: "+d.APIVersion+"\n") && !strings.Contains(d.YAML, "\napiVersion: "+d.APIVersion+"\n") {
					t.Errorf("%s lacks its apiVersion line", d.ID())
				}
			}
			h := objs["HorizontalPodAutoscaler/inference-gpu"].(*autoscalingv2.HorizontalPodAutoscaler)
			m := h.Spec.Metrics[0]
			if m.Type != autoscalingv2.PodsMetricSourceType || m.Pods.Metric.Name != GPUUtilMetric || m.Pods.Target.AverageValue.Value() != int64(sc.GPUUtilAlertPercent) {
				t.Fatalf("HPA metric %+v, want Pods %s at %d", m, GPUUtilMetric, sc.GPUUtilAlertPercent)
			}
			for _, m := range h.Spec.Metrics {
				if m.Type == autoscalingv2.ResourceMetricSourceType {
					t.Fatal("HPA uses a Resource metric, which cannot be nvidia.com/gpu")
				}
			}
		})
	}
}

func TestGPUPodsTolerateWorkerTaintsAndSelectWorkers(t *testing.T) {
	docs, err := Render(opts(catalog.ScenarioMolecularDynamics))
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, Join(docs))
	specs := map[string]corev1.PodSpec{
		"device plugin":   objs["DaemonSet/nvidia-device-plugin"].(*appsv1.DaemonSet).Spec.Template.Spec,
		"dcgm-exporter":   objs["DaemonSet/dcgm-exporter"].(*appsv1.DaemonSet).Spec.Template.Spec,
		"training":        objs["PodTemplate/"+TrainingTemplateName].(*corev1.PodTemplate).Template.Spec,
		"nccl-tests":      objs["Job/nccl-tests-all-reduce"].(*batchv1.Job).Spec.Template.Spec,
		"hpcg":            objs["Job/hpcg"].(*batchv1.Job).Spec.Template.Spec,
		"pool all-reduce": objs["Job/"+PoolAllReduceName].(*batchv1.Job).Spec.Template.Spec,
	}
	for name, spec := range specs {
		for _, taint := range bootstrap.DefaultWorkerTaints() {
			k8sTaint := corev1.Taint{Key: taint.Key, Value: taint.Value, Effect: corev1.TaintEffect(taint.Effect)}
			if !slices.ContainsFunc(spec.Tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(logr.Discard(), &k8sTaint, false) }) {
				t.Errorf("%s does not tolerate the worker taint %+v", name, taint)
			}
		}
		if spec.NodeSelector[bootstrap.NodeRoleLabel] != bootstrap.RoleLabelValue(bootstrap.RoleGPUWorker) {
			t.Errorf("%s node selector %v does not match the worker label", name, spec.NodeSelector)
		}
	}
	for _, name := range []string{"training", "nccl-tests", "hpcg", "pool all-reduce"} {
		a := specs[name].Affinity
		if a == nil || a.PodAntiAffinity == nil || a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" {
			t.Errorf("%s has no required anti-affinity per node", name)
		}
	}
	// A broken driver fails the device plugin where kubectl shows it.
	if dp := specs["device plugin"].Containers[0].Env; !slices.Contains(dp, corev1.EnvVar{Name: "FAIL_ON_INIT_ERROR", Value: "true"}) {
		t.Errorf("device plugin env %v: want FAIL_ON_INIT_ERROR=true", dp)
	}
	tr := specs["training"]
	probe := tr.Containers[0].LivenessProbe
	if probe == nil || probe.Exec == nil || !strings.Contains(strings.Join(probe.Exec.Command, " "), HeartbeatFile) ||
		strings.Contains(strings.Join(probe.Exec.Command, " "), "pgrep") {
		t.Fatalf("training liveness probe %+v, want the heartbeat check", probe)
	}
	if *tr.ActiveDeadlineSeconds != int64(DefaultMaxRuntime.Seconds()) {
		t.Fatalf("activeDeadlineSeconds %d", *tr.ActiveDeadlineSeconds)
	}
	env := map[string]string{}
	for _, e := range tr.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["NCCL_IB_HCA"] != "erdma_0" || env["NCCL_IB_DISABLE"] != "0" || env["NCCL_NET"] != "IB" {
		t.Fatalf("training env %v lacks the eRDMA NCCL settings", env)
	}
	// The eRDMA settings name the node's devices: the replica must see them.
	if !tr.HostNetwork || tr.DNSPolicy != corev1.DNSClusterFirstWithHostNet ||
		tr.Containers[0].SecurityContext == nil || tr.Containers[0].SecurityContext.Privileged == nil || !*tr.Containers[0].SecurityContext.Privileged {
		t.Fatalf("training replica on eRDMA lacks host network or device access: hostNetwork=%v dns=%s sc=%+v", tr.HostNetwork, tr.DNSPolicy, tr.Containers[0].SecurityContext)
	}
	if q := tr.Containers[0].Resources.Limits[GPUResource]; q.Value() != 8 {
		t.Fatalf("training GPU limit %v", q)
	}
	dcgm := specs["dcgm-exporter"].Containers[0]
	if dcgm.LivenessProbe == nil || dcgm.LivenessProbe.HTTPGet == nil || dcgm.LivenessProbe.HTTPGet.Path != "/health" {
		t.Fatalf("dcgm-exporter liveness %+v", dcgm.LivenessProbe)
	}
	j := objs["Job/nccl-tests-all-reduce"].(*batchv1.Job)
	if *j.Spec.Completions != 4 || *j.Spec.Parallelism != 4 || *j.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("nccl-tests job spec %+v, want one indexed pod per node", j.Spec)
	}
}

func TestPrometheusAdapterConfig(t *testing.T) {
	docs, err := Render(opts(catalog.ScenarioAITraining))
	if err != nil {
		t.Fatal(err)
	}
	cm := decodeAll(t, Join(docs))["ConfigMap/"+AdapterConfigMapName].(*corev1.ConfigMap)
	var cfg AdapterConfig
	if err := yaml.UnmarshalStrict([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Rules[0].Name.As != GPUUtilMetric || cfg.ExternalRules[0].Name.As != GPUUtilPoolMetric {
		t.Fatalf("adapter metrics %+v", cfg)
	}
	for _, r := range append(cfg.Rules, cfg.ExternalRules...) {
		if !strings.Contains(r.SeriesQuery, "DCGM_FI_DEV_GPU_UTIL") || !strings.Contains(r.MetricsQuery, "<<.Series>>") {
			t.Fatalf("rule %+v", r)
		}
	}
	if cfg.Rules[0].Resources.Overrides["pod"].Resource != "pod" {
		t.Fatal("per-pod rule does not map the pod label")
	}
}

func TestAntiAffinityYAML(t *testing.T) {
	s, err := AntiAffinityYAML("llm-run-7")
	if err != nil {
		t.Fatal(err)
	}
	var a corev1.Affinity
	if err := yaml.UnmarshalStrict([]byte(s), &a); err != nil {
		t.Fatal(err)
	}
	if a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[ReplicaGroupLabel] != "llm-run-7" {
		t.Fatalf("%s", s)
	}
}

func TestRenderOptions(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Options)
		field  string
		check  func(*testing.T, map[string]any)
	}{
		{name: "no HPA", mutate: func(o *Options) { o.HPA = nil }, check: func(t *testing.T, objs map[string]any) {
			if _, ok := objs["HorizontalPodAutoscaler/inference-gpu"]; ok {
				t.Fatal("HPA rendered without hpa options")
			}
		}},
		{name: "HPA target", mutate: func(o *Options) { o.HPA.TargetPercent = 60 }, check: func(t *testing.T, objs map[string]any) {
			h := objs["HorizontalPodAutoscaler/inference-gpu"].(*autoscalingv2.HorizontalPodAutoscaler)
			if h.Spec.Metrics[0].Pods.Target.AverageValue.Value() != 60 {
				t.Fatal("target not applied")
			}
		}},
		{name: "same namespace twice", mutate: func(o *Options) { o.Namespace, o.WorkloadNamespace = "gpu", "gpu" }, check: func(t *testing.T, objs map[string]any) {
			if _, ok := objs["Namespace/gpu"]; !ok {
				t.Fatal("namespace missing")
			}
		}},
		{name: "max runtime 24h", mutate: func(o *Options) { o.MaxRuntime = 24 * time.Hour }, check: func(t *testing.T, objs map[string]any) {
			c := objs["CronJob/gpu-idle-reaper"].(*batchv1.CronJob).Spec.JobTemplate.Spec.Template.Spec.Containers[0]
			if !slices.Contains(c.Env, corev1.EnvVar{Name: "MAX_RUNTIME_SECONDS", Value: "86400"}) {
				t.Fatalf("reaper env %v", c.Env)
			}
		}},
		{name: "unknown scenario", mutate: func(o *Options) { o.Scenario = "weather" }, field: "scenario"},
		{name: "namespace", mutate: func(o *Options) { o.Namespace = "GPU_System" }, field: "namespace"},
		{name: "no nodes", mutate: func(o *Options) { o.Nodes = 0 }, field: "node_count"},
		{name: "too many GPUs", mutate: func(o *Options) { o.GPUsPerNode = 32 }, field: "gpus_per_node"},
		{name: "max runtime 10m", mutate: func(o *Options) { o.MaxRuntime = 10 * time.Minute }, field: "max_runtime"},
		{name: "image", mutate: func(o *Options) { o.Images.HPCG = "Not An Image" }, field: "images.hpcg"},
		{name: "pytorch image", mutate: func(o *Options) { o.Images.PyTorch = "Not An Image" }, field: "images.pytorch"},
		{name: "cross-node minimum", mutate: func(o *Options) { o.MinCrossNodeBusBandwidthGBs = -1 }, field: "min_cross_node_bus_bandwidth_gbs"},
		{name: "HPA range", mutate: func(o *Options) { o.HPA.MinReplicas = 5 }, field: "hpa"},
		{name: "HPA deployment", mutate: func(o *Options) { o.HPA.Deployment = "Bad_Name" }, field: "hpa.deployment"},
		{name: "HPA target above 100", mutate: func(o *Options) { o.HPA.TargetPercent = 150 }, field: "hpa.target_gpu_util_percent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts(catalog.ScenarioAITraining)
			tt.mutate(&o)
			docs, err := Render(o)
			if tt.field != "" {
				var ie *planerr.Error
				if !errors.As(err, &ie) || ie.Path != tt.field || ie.Fix == "" {
					t.Fatalf("Render() error = %v, want a *planerr.Error on %s", err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, decodeAll(t, Join(docs)))
		})
	}
}

// TestReaperScript runs the reaper's Python against a fake API server: a Job's pod past the
// limit deletes the Job once, a bare pod past the limit is deleted, young pods, finished pods and
// Deployment pods are left alone; in the workload namespace and then in each team namespace.
func TestReaperScript(t *testing.T) {
	py := testtools.Require(t, "python3", "python3")
	old := time.Now().Add(-73 * time.Hour).UTC().Format(time.RFC3339)
	young := time.Now().Add(-1 * time.Hour).UTC().Format(time.RFC3339)
	pod := func(name, phase, start, ownerKind, owner string) map[string]any {
		m := map[string]any{"name": name}
		if ownerKind != "" {
			m["ownerReferences"] = []map[string]any{{"kind": ownerKind, "name": owner, "controller": true}}
		}
		return map[string]any{"metadata": m, "status": map[string]any{"phase": phase, "startTime": start}}
	}
	list := map[string]any{"items": []any{
		pod("train-0", "Running", old, "Job", "train"),
		pod("train-1", "Running", old, "Job", "train"),
		pod("notebook", "Running", old, "", ""),
		pod("fresh", "Running", young, "", ""),
		pod("finished", "Succeeded", old, "", ""),
		pod("web-abc", "Running", old, "ReplicaSet", "web-123"),
	}}
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer test-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet {
			_ = json.NewEncoder(w).Encode(list)
			return
		}
		_, _ = fmt.Fprint(w, `{"kind":"Status","status":"Success"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	for name, content := range map[string]string{"reaper.py": ReaperScript, "token": "test-token\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, filepath.Join(dir, "reaper.py"))
	cmd.Env = append(os.Environ(), "API_SERVER="+srv.URL, "SA_DIR="+dir, "TARGET_NAMESPACE=gpu-workloads", "TEAM_NAMESPACES=chem cfd",
		"LABEL_SELECTOR="+ReapLabel+"=true", "MAX_RUNTIME_SECONDS=259200")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reaper: %v\n%s", err, out)
	}
	var want []string
	for _, ns := range []string{"gpu-workloads", "chem", "cfd"} {
		want = append(want,
			"GET /api/v1/namespaces/"+ns+"/pods?labelSelector=gpucluster.io/reap-after-max-runtime%3Dtrue",
			"DELETE /apis/batch/v1/namespaces/"+ns+"/jobs/train",
			"DELETE /api/v1/namespaces/"+ns+"/pods/notebook")
	}
	if !slices.Equal(calls, want) {
		t.Fatalf("API calls\n%s\nwant\n%s\noutput:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"), out)
	}
	if !strings.Contains(string(out), "skip pod web-abc: owned by ReplicaSet") {
		t.Fatalf("output lacks the skipped Deployment pod:\n%s", out)
	}
}
