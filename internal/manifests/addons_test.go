package manifests

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

func addons(t *testing.T, scenario string, validation bool) map[string]map[string]any {
	t.Helper()
	files, err := Addons(opts(scenario), AddonOptions{Validation: validation})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, f := range files {
		out[f.Name] = decodeAll(t, f.YAML())
	}
	return out
}

// TestAddonsFiles checks the file names (their order is the apply order), that every object
// decodes strictly into its k8s.io/api type, and that validation jobs come only when asked for.
func TestAddonsFiles(t *testing.T) {
	base := []string{AddonNamespaces, AddonDevicePlugin, AddonDCGMExporter, AddonMonitoring, AddonReaper, AddonWorkloads}
	for _, sc := range catalog.Scenarios() {
		for _, validation := range []bool{false, true} {
			files := addons(t, sc.Name, validation)
			want := slices.Clone(base)
			if validation {
				want = append(want, AddonValidation)
			}
			if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
				t.Fatalf("%s validation=%v: files %v, want %v", sc.Name, validation, got, want)
			}
			for _, k := range []string{"Namespace/gpu-system", "Namespace/gpu-workloads", "Namespace/" + MonitoringNamespace} {
				if files[AddonNamespaces][k] == nil {
					t.Errorf("%s: %s lacks %s", sc.Name, AddonNamespaces, k)
				}
			}
			for _, k := range []string{"Deployment/prometheus", "Deployment/alertmanager", "Deployment/grafana", "DaemonSet/node-exporter",
				"Deployment/prometheus-adapter", "APIService/v1beta1.custom.metrics.k8s.io", "APIService/v1beta1.external.metrics.k8s.io"} {
				if files[AddonMonitoring][k] == nil {
					t.Errorf("%s: %s lacks %s", sc.Name, AddonMonitoring, k)
				}
			}
			if validation {
				_, hasHPCG := files[AddonValidation]["Job/hpcg"]
				if hasHPCG != IsSimulation(sc.Name) || files[AddonValidation]["Job/"+PoolAllReduceName] == nil {
					t.Errorf("%s: validation objects %v", sc.Name, slices.Sorted(maps.Keys(files[AddonValidation])))
				}
				// Applied at every boot: a Job with a time-to-live would come back and run again.
				for k, obj := range files[AddonValidation] {
					if j, ok := obj.(*batchv1.Job); ok && j.Spec.TTLSecondsAfterFinished != nil {
						t.Errorf("%s: %s has ttlSecondsAfterFinished, so a reboot after it expires runs it again", sc.Name, k)
					}
				}
			}
		}
	}
}

// inUserData is what one add-on file takes in the user data: gzip'd, then base64-encoded, as the
// node bootstrap writes it.
func inUserData(y string) int {
	var fb bytes.Buffer
	fw, _ := gzip.NewWriterLevel(&fb, gzip.BestCompression)
	_, _ = fw.Write([]byte(y))
	_ = fw.Close()
	return base64.StdEncoding.EncodedLen(fb.Len())
}

// TestAddonsMPIOperator: with MPIOperator the add-ons end with the MPI Operator's file, the
// MPIJob CRD of MPIOperatorVersion first (what the MPIJob templates are checked against), then the
// operator, strictly decoded, in the registry of the other add-ons. Without it there is no such
// file. With it, the scenario's add-on set takes more user data than the inline budget, which is
// why only bundled pools get it (TestAddonsSize holds the inline sets to the budget).
func TestAddonsMPIOperator(t *testing.T) {
	o := opts(catalog.ScenarioMolecularDynamics)
	o.ImageRegistry = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"
	files, err := Addons(o, AddonOptions{MPIOperator: true, Validation: true})
	if err != nil {
		t.Fatal(err)
	}
	last := files[len(files)-1]
	if last.Name != AddonMPIOperator {
		t.Fatalf("the last add-on file is %s, want %s", last.Name, AddonMPIOperator)
	}
	docs := strings.Split(last.YAML(), "---\n")
	var crd crdFile
	if err := yaml.Unmarshal([]byte(docs[0]), &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Group != "kubeflow.org" || crd.Spec.Names.Kind != "MPIJob" || len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		t.Fatalf("the first document of %s is not the MPIJob CRD with its schema: %+v", AddonMPIOperator, crd.Spec)
	}
	objs := decodeAll(t, strings.Join(docs[1:], "---\n"))
	dep, ok := objs["Deployment/"+MPIOperatorName].(*appsv1.Deployment)
	if !ok || objs["Namespace/"+MPIOperatorNamespace] == nil || objs["ClusterRole/"+MPIOperatorName] == nil {
		t.Fatalf("%s lacks the operator's namespace, role or Deployment: %v", AddonMPIOperator, slices.Sorted(maps.Keys(objs)))
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(got, o.ImageRegistry+"/") {
		t.Errorf("the operator's image %s is not from the add-ons' registry %s", got, o.ImageRegistry)
	}
	if tol := dep.Spec.Template.Spec.Tolerations; !slices.ContainsFunc(tol, func(tl corev1.Toleration) bool {
		return tl.Key == controlPlaneLabel && tl.Operator == corev1.TolerationOpExists && tl.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("the operator's tolerations %v do not tolerate the control-plane taint: on tainted nodes only, it would stay Pending", tol)
	}
	without, err := AddonsYAML(o, AddonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := without[AddonMPIOperator]; ok {
		t.Errorf("%s is in the add-ons without MPIOperator", AddonMPIOperator)
	}
	total := 0
	for _, f := range files {
		total += inUserData(f.YAML())
	}
	if total <= 20<<10 {
		t.Errorf("%s's add-ons with the MPI Operator take %d bytes of user data, within the 20 KB inline budget: bundles would not be needed for them", o.Scenario, total)
	}
	t.Logf("%s's add-ons with the MPI Operator: %d bytes of user data (%s alone %d), over the 20 KB inline budget: bundled pools only", o.Scenario, total, AddonMPIOperator, inUserData(last.YAML()))
}

// TestAddonsSize logs the gzip'd size of the whole add-on set, validation included: the init
// control-plane node's user data, which carries it when the pool has no bootstrap bundle, is
// limited to 32 KB. A bundled pool's add-ons travel in its bundle, which has no such cap (the MPI
// Operator joins them then: TestAddonsMPIOperator).
func TestAddonsSize(t *testing.T) {
	const limit = 32 << 10
	for _, sc := range catalog.Scenarios() {
		m, err := AddonsYAML(opts(sc.Name), AddonOptions{Validation: true})
		if err != nil {
			t.Fatal(err)
		}
		var raw, buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		for _, name := range slices.Sorted(maps.Keys(m)) {
			raw.WriteString(m[name])
		}
		if _, err := zw.Write(raw.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		// The node bootstrap writes each file gzip'd and base64-encoded into the user data.
		perFile := 0
		for _, y := range m {
			perFile += inUserData(y)
		}
		t.Logf("add-on set for %s: %d files, %d bytes of YAML, %d bytes gzip'd as one stream, %d bytes as per-file gzip+base64 (user data limit %d)",
			sc.Name, len(m), raw.Len(), buf.Len(), perFile, limit)
		// At most 20 KB as written into the user data, which leaves 12 KB for what the same user data
		// carries besides: the kubeadm configuration, the CA, the CNI and the scripts.
		if perFile > 20<<10 {
			t.Errorf("%s: add-ons take %d bytes of user data (per-file gzip+base64), over the 20 KB budget", sc.Name, perFile)
		}
	}
}

func configMap(t *testing.T, objs map[string]any, name string) *corev1.ConfigMap {
	t.Helper()
	cm, ok := objs["ConfigMap/"+name].(*corev1.ConfigMap)
	if !ok {
		t.Fatalf("no ConfigMap %s", name)
	}
	return cm
}

// TestPrometheusConfigPromtool hands the Prometheus ConfigMap, as mounted, to promtool: the
// configuration and the rule file it loads. Debian's promtool is built without Kubernetes service
// discovery and rejects kubernetes_sd_configs as an unknown field; with such a promtool the test
// says so and checks everything else, the discovery blocks replaced by static_configs.
func TestPrometheusConfigPromtool(t *testing.T) {
	promtool := testtools.Require(t, "promtool", "prometheus")
	for _, sc := range catalog.Scenarios() {
		cm := configMap(t, addons(t, sc.Name, false)[AddonMonitoring], prometheusName)
		dir := t.TempDir()
		write := func(name, content string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		for k, v := range cm.Data {
			write(k, v)
		}
		// promtool opens the files a scrape authenticates with, which a pod has from its service
		// account: stand-ins here, at the same names.
		cfg := strings.NewReplacer(serviceAccountCA, write("ca.crt", ""), serviceAccountToken, write("token", "t")).Replace(cm.Data["prometheus.yml"])
		out, err := exec.Command(promtool, "check", "config", write("prometheus.yml", cfg)).CombinedOutput()
		if err != nil && strings.Contains(string(out), "field kubernetes_sd_configs not found") {
			t.Logf("%s: this promtool has no Kubernetes discovery; checking the rest with static_configs in its place", sc.Name)
			cfg = strings.ReplaceAll(cfg, "kubernetes_sd_configs:", "static_configs:")
			cfg = regexp.MustCompile(`(?m)^(\s+)- namespaces:\n\s+names:\n(\s+- .*\n)+\s+role: \w+\n`).ReplaceAllString(cfg, "$1- targets: [\"localhost:9400\"]\n")
			out, err = exec.Command(promtool, "check", "config", write("static.yml", cfg)).CombinedOutput()
		}
		if err != nil || !strings.Contains(string(out), PrometheusRulesFile) {
			t.Fatalf("%s: promtool check config: %v\n%s\n%s", sc.Name, err, out, cfg)
		}
		if !strings.Contains(cm.Data[PrometheusRulesFile], "scenario: "+sc.Name) {
			t.Errorf("%s: the rule file is not the scenario's", sc.Name)
		}
	}
}

// TestAlertmanagerConfigAmtool hands the Alertmanager ConfigMap to amtool.
func TestAlertmanagerConfigAmtool(t *testing.T) {
	amtool := testtools.Require(t, "amtool", "prometheus-alertmanager")
	cm := configMap(t, addons(t, catalog.ScenarioAITraining, false)[AddonMonitoring], alertmanagerName)
	p := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(p, []byte(cm.Data["alertmanager.yml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(amtool, "check-config", p).CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("amtool check-config: %v\n%s", err, out)
	}
}

func container(t *testing.T, objs map[string]any, key string) corev1.Container {
	t.Helper()
	switch o := objs[key].(type) {
	case *appsv1.Deployment:
		return o.Spec.Template.Spec.Containers[0]
	case *appsv1.DaemonSet:
		return o.Spec.Template.Spec.Containers[0]
	}
	t.Fatalf("no Deployment or DaemonSet %s", key)
	return corev1.Container{}
}

// TestMonitoringWiring checks that the pieces point at each other: Prometheus scrapes the
// dcgm-exporter Service's port and node-exporter's, the HPA's metric is one prometheus-adapter
// serves, the adapter reads the ConfigMap it is given and the APIServices reach its Service, and
// Grafana gets the dashboard and Prometheus as its data source.
func TestMonitoringWiring(t *testing.T) {
	files := addons(t, catalog.ScenarioAITraining, false)
	mon := files[AddonMonitoring]

	var prom promConfig
	if err := yaml.UnmarshalStrict([]byte(configMap(t, mon, prometheusName).Data["prometheus.yml"]), &prom); err != nil {
		t.Fatal(err)
	}
	dcgm := files[AddonDCGMExporter]["Service/dcgm-exporter"].(*corev1.Service)
	wantKeep := map[string]string{
		"dcgm-exporter": dcgm.Name + ";" + dcgm.Spec.Ports[0].Name,
		"node-exporter": nodeExporterName + ";" + container(t, mon, "DaemonSet/node-exporter").Ports[0].Name,
		// The default namespace's kubernetes Service names its port https (kube-apiserver's
		// controlplane controller, pkg/controlplane/controller/kubernetesservice).
		"apiserver": "kubernetes;https",
	}
	if !strings.Contains(alerting.APIServerP99Expr(), `job="apiserver"`) {
		t.Errorf("the API server latency alert selects %s, not the scrape job apiserver", alerting.APIServerP99Expr())
	}
	// The log counter sidecar writes the alert's metric where node-exporter's textfile collector reads.
	ds := mon["DaemonSet/node-exporter"].(*appsv1.DaemonSet)
	exporter, sidecar := ds.Spec.Template.Spec.Containers[0], ds.Spec.Template.Spec.Containers[1]
	if !slices.Contains(exporter.Args, "--collector.textfile.directory="+textfileGlob) ||
		!strings.Contains(sidecar.Command[2], textfileDir+"/gpu_cluster_log.prom") || !strings.Contains(sidecar.Command[2], alerting.MetricLogErrorLines+" %s") {
		t.Errorf("node-exporter reads %v, the sidecar writes:\n%s", exporter.Args, sidecar.Command[2])
	}
	// The textfile glob takes both the sidecar's directory and the host's, where the node's
	// certificate script writes (bootstrap.TextfileDir), and no other mount of the exporter.
	mounts := map[string]string{}
	for _, m := range exporter.VolumeMounts {
		if ok, _ := filepath.Match(textfileGlob, m.MountPath); ok {
			mounts[m.Name] = m.MountPath
		}
	}
	hostDir := ""
	for _, v := range ds.Spec.Template.Spec.Volumes {
		if v.Name == "host-textfile" && v.HostPath != nil {
			hostDir = v.HostPath.Path
		}
	}
	if len(mounts) != 2 || mounts["textfile"] != textfileDir || mounts["host-textfile"] == "" || hostDir != bootstrap.TextfileDir {
		t.Errorf("the textfile glob %s matches the mounts %v, the host volume is %q; want the sidecar's and %s", textfileGlob, mounts, hostDir, bootstrap.TextfileDir)
	}
	for _, sc := range prom.ScrapeConfigs {
		if got := sc.RelabelConfig[0]; got.Action != "keep" || got.Regex != wantKeep[sc.JobName] {
			t.Errorf("job %s keeps %q, want %q", sc.JobName, got.Regex, wantKeep[sc.JobName])
		}
	}
	if ns := prom.ScrapeConfigs[0].KubernetesSD[0].Namespaces["names"]; !slices.Equal(ns, []string{dcgm.Namespace}) || !prom.ScrapeConfigs[0].HonorLabels {
		t.Errorf("dcgm-exporter job looks in %v (honor_labels %v), the Service is in %s", ns, prom.ScrapeConfigs[0].HonorLabels, dcgm.Namespace)
	}

	var adapter AdapterConfig
	if err := yaml.UnmarshalStrict([]byte(configMap(t, mon, AdapterConfigMapName).Data["config.yaml"]), &adapter); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, r := range adapter.Rules {
		served[r.Name.As] = true
	}
	h := files[AddonWorkloads]["HorizontalPodAutoscaler/inference-gpu"].(*autoscalingv2.HorizontalPodAutoscaler)
	for _, m := range h.Spec.Metrics {
		if m.Pods == nil || !served[m.Pods.Metric.Name] {
			t.Errorf("HPA metric %+v is not a Pods metric prometheus-adapter serves (%v)", m, served)
		}
	}
	ad := mon["Deployment/prometheus-adapter"].(*appsv1.Deployment)
	if v := ad.Spec.Template.Spec.Volumes[0]; v.ConfigMap == nil || v.ConfigMap.Name != AdapterConfigMapName {
		t.Errorf("adapter mounts %+v", v)
	}
	if !slices.Contains(ad.Spec.Template.Spec.Containers[0].Args, "--config=/etc/adapter/config.yaml") {
		t.Errorf("adapter args %v", ad.Spec.Template.Spec.Containers[0].Args)
	}
	svc := mon["Service/prometheus-adapter"].(*corev1.Service)
	for _, group := range []string{"custom.metrics.k8s.io", "external.metrics.k8s.io"} {
		as := mon["APIService/v1beta1."+group].(*apiregv1.APIService)
		if ref := as.Spec.Service; ref.Name != svc.Name || ref.Namespace != svc.Namespace || *ref.Port != svc.Spec.Ports[0].Port {
			t.Errorf("APIService %s reaches %+v, the adapter Service is %s/%s:%d", as.Name, ref, svc.Namespace, svc.Name, svc.Spec.Ports[0].Port)
		}
	}

	g := configMap(t, mon, grafanaName)
	var dash struct{ UID string }
	if err := json.Unmarshal([]byte(g.Data["gpu.json"]), &dash); err != nil || dash.UID != "gpucluster-ai-training" {
		t.Errorf("Grafana dashboard: uid %q, %v", dash.UID, err)
	}
	if !strings.Contains(g.Data["datasources.yaml"], svcURL(prometheusName, prometheusPort)) {
		t.Errorf("Grafana data source: %s", g.Data["datasources.yaml"])
	}
}

// TestAddonsHoldNoSecret: no Secret object, no Grafana admin password as a value, anonymous
// viewers only; the admin password is made in the pod.
func TestAddonsHoldNoSecret(t *testing.T) {
	m, err := AddonsYAML(opts(catalog.ScenarioAITraining), AddonOptions{Validation: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, y := range m {
		if strings.Contains(y, "\nkind: Secret\n") || strings.Contains(y, "GF_SECURITY_ADMIN_PASSWORD\n") {
			t.Errorf("%s holds a Secret or a literal Grafana admin password", name)
		}
	}
	files := addons(t, catalog.ScenarioAITraining, false)
	env := map[string]string{}
	for _, e := range container(t, files[AddonMonitoring], "Deployment/grafana").Env {
		env[e.Name] = e.Value
	}
	if env["GF_AUTH_ANONYMOUS_ORG_ROLE"] != "Viewer" || env["GF_AUTH_DISABLE_LOGIN_FORM"] != "true" || env["GF_SECURITY_ADMIN_PASSWORD__FILE"] != grafanaAdminPasswordFile {
		t.Errorf("Grafana environment %v", env)
	}
}

// TestAddonImagesArePinned: every image of every add-on file is in internal/images.
func TestAddonImagesArePinned(t *testing.T) {
	pinned := images.Refs()
	ca := autoscalerOpts()
	m, err := AddonsYAML(opts(catalog.ScenarioMolecularDynamics), AddonOptions{Validation: true, ClusterAutoscaler: &ca, GPUHealthAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for name, y := range m {
		for _, img := range imageLine.FindAllStringSubmatch(y, -1) {
			seen[img[1]] = true
			if !pinned[img[1]] {
				t.Errorf("%s names image %q, which is not in internal/images", name, img[1])
			}
		}
	}
	for _, i := range images.All() {
		if i.By == images.ByAddons && !seen[i.Ref()] {
			t.Errorf("image %s (%s) is pinned but no add-on uses it", i.Name, i.Ref())
		}
	}
}

// TestInventoryFindsEveryImage: the inventory the guide is built from sees the same images as a
// grep of the rendered YAML, and places them in the file and namespace of their object.
func TestInventoryFindsEveryImage(t *testing.T) {
	o, a := opts(catalog.ScenarioMolecularDynamics), AddonOptions{Validation: true}
	inv, err := Inventory(o, a)
	if err != nil {
		t.Fatal(err)
	}
	m, err := AddonsYAML(o, a)
	if err != nil {
		t.Fatal(err)
	}
	grep, fromInv := map[string]bool{}, map[string]bool{}
	for _, y := range m {
		for _, img := range imageLine.FindAllStringSubmatch(y, -1) {
			grep[img[1]] = true
		}
	}
	for _, w := range inv {
		for _, img := range w.Images {
			fromInv[img] = true
		}
		if !strings.Contains(m[w.File], "name: "+w.Name+"\n  namespace: "+w.Namespace+"\n") {
			t.Errorf("%s %s/%s is not in %s", w.Kind, w.Namespace, w.Name, w.File)
		}
	}
	if !maps.Equal(grep, fromInv) {
		t.Errorf("inventory images %v, rendered YAML names %v", fromInv, grep)
	}
}

// TestMonitoringHasMemoryLimits: every monitoring container may land on a control-plane node, so
// each requests what it needs and has a memory limit.
func TestMonitoringHasMemoryLimits(t *testing.T) {
	mon := addons(t, catalog.ScenarioAITraining, false)[AddonMonitoring]
	for _, k := range []string{"Deployment/prometheus", "Deployment/alertmanager", "Deployment/grafana", "Deployment/prometheus-adapter", "DaemonSet/node-exporter"} {
		r := container(t, mon, k).Resources
		if r.Limits.Memory().IsZero() || r.Requests.Memory().IsZero() || r.Requests.Cpu().IsZero() {
			t.Errorf("%s: resources %+v; give CPU and memory requests and a memory limit", k, r)
		}
	}
}
