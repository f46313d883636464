package manifests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

var textDescription = regexp.MustCompile(`description: \S`)

func kueueTestOptions() *MPIOptions {
	return &MPIOptions{
		Pools: []Pool{{Name: "md-a", Nodes: 4, GPUsPerNode: 8}, {Name: "md-b", Nodes: 2, GPUsPerNode: 4}},
		Teams: map[string]Team{"chem": {GPUs: 16}, "cfd": {GPUs: 8, Pool: "md-b"}},
	}
}

// TestAddonsKueue: with Kueue the add-ons end with Kueue's file, after the validation Jobs and
// the MPI Operator (the webhooks it registers refuse Jobs until the manager answers). The file is
// the release (its CRDs, the manager in the add-ons' registry, its webhooks) with one manager
// ConfigMap, the rendered one, then the pools' flavors and the teams' queues, which name the
// pools as given. Its size is far over what user data holds: bundles carry it uncapped.
func TestAddonsKueue(t *testing.T) {
	o := opts(catalog.ScenarioMolecularDynamics)
	o.ImageRegistry = "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"
	files, err := Addons(o, AddonOptions{MPIOperator: true, Validation: true, Kueue: kueueTestOptions()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if n := len(names); n < 3 || names[n-1] != AddonKueue || names[n-2] != AddonMPIOperator || !slices.Contains(names, AddonValidation) || !slices.IsSorted(names) {
		t.Fatalf("add-on files %v: want them in name order, ending with %s after %s", names, AddonKueue, AddonMPIOperator)
	}
	docs := files[len(files)-1].Docs
	first := map[string]int{}
	count := map[string]int{}
	for i, d := range docs {
		if _, ok := first[d.Kind]; !ok {
			first[d.Kind] = i
		}
		count[d.Kind]++
	}
	for _, kind := range []string{"CustomResourceDefinition", "Deployment", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ResourceFlavor", "ClusterQueue", "LocalQueue"} {
		if count[kind] == 0 {
			t.Errorf("%s has no %s: %v", AddonKueue, kind, count)
		}
	}
	if count["ResourceFlavor"] != 2 || count["ClusterQueue"] != 2 || count["LocalQueue"] != 2 {
		t.Errorf("%s: %d flavors, %d ClusterQueues, %d LocalQueues; want one flavor per pool and one of each queue per team", AddonKueue,
			count["ResourceFlavor"], count["ClusterQueue"], count["LocalQueue"])
	}
	if first["ClusterQueue"] < first["CustomResourceDefinition"] || first["ResourceFlavor"] < first["Deployment"] {
		t.Errorf("%s: the queues come before the release's CRDs or manager: %v", AddonKueue, first)
	}
	var crds []string
	configMaps := 0
	for _, d := range docs {
		switch {
		case d.Kind == "CustomResourceDefinition":
			crds = append(crds, d.Name)
			// A description with text; a property named description (WorkloadPriorityClass's) stays.
			if textDescription.MatchString(d.YAML) {
				t.Errorf("CRD %s keeps its descriptions", d.Name)
			}
		case d.Kind == "ConfigMap" && d.Name == KueueConfigMapName:
			configMaps++
			if !strings.Contains(d.YAML, "blockAdmission: true") || !strings.Contains(d.YAML, "kubeflow.org/mpijob") {
				t.Errorf("the manager's ConfigMap is not the rendered one (gang admission, MPIJob integration):\n%s", d.YAML)
			}
		case d.Kind == "Deployment":
			if want := images.RefIn(images.Kueue, o.ImageRegistry); !strings.Contains(d.YAML, "image: "+want+"\n") || strings.Contains(d.YAML, kueueReleaseImage) {
				t.Errorf("the manager's image is not %s:\n%s", want, d.YAML)
			}
			if !strings.Contains(d.YAML, "- --config=/controller_manager_config.yaml\n        - --feature-gates=VisibilityOnDemand=false\n") {
				t.Errorf("the manager's arguments do not turn the visibility server off:\n%s", d.YAML)
			}
			var dep appsv1.Deployment
			if err := yaml.UnmarshalStrict([]byte(d.YAML), &dep); err != nil {
				t.Fatalf("the manager's Deployment: %v", err)
			}
			// The control-plane nodes and the GPU workers are all tainted: without this the
			// manager stays Pending and its webhooks refuse every Job.
			if !slices.ContainsFunc(dep.Spec.Template.Spec.Tolerations, func(tol corev1.Toleration) bool {
				return tol.Key == "node-role.kubernetes.io/control-plane" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
			}) {
				t.Errorf("the manager's pod does not tolerate the control-plane taint: %+v", dep.Spec.Template.Spec.Tolerations)
			}
		case d.Kind == "APIService":
			t.Errorf("%s registers the aggregated API %s, which no manager answers", AddonKueue, d.Name)
		case d.Kind == "ClusterQueue" && d.Name == "cfd":
			if !strings.Contains(d.YAML, "name: md-b") {
				t.Errorf("team cfd's ClusterQueue has no quota on its pool md-b:\n%s", d.YAML)
			}
		}
	}
	for _, want := range []string{"clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io", "resourceflavors.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"} {
		if !slices.Contains(crds, want) {
			t.Errorf("%s lacks the CRD %s: %v", AddonKueue, want, crds)
		}
	}
	if configMaps != 1 {
		t.Errorf("%s has %d ConfigMaps %s, want the rendered one only", AddonKueue, configMaps, KueueConfigMapName)
	}
	if size := inUserData(files[len(files)-1].YAML()); size <= 32<<10 {
		t.Errorf("%s takes %d bytes of user data, within ECS's 32 KB: bundles would not be needed for it", AddonKueue, size)
	} else {
		t.Logf("%s: %d documents, %d bytes of YAML, %d bytes gzip'd and base64-encoded: bundled pools only", AddonKueue, len(docs), len(files[len(files)-1].YAML()), size)
	}
	without, err := AddonsYAML(o, AddonOptions{MPIOperator: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := without[AddonKueue]; ok {
		t.Errorf("%s is in the add-ons without Kueue", AddonKueue)
	}
}

// TestAddonsKueueBadQueues: the queues are checked as the mpi attribute's: a team quota beyond
// its pool fails with the attribute named, and no add-ons.
func TestAddonsKueueBadQueues(t *testing.T) {
	k := kueueTestOptions()
	k.Teams["chem"] = Team{GPUs: 40}
	files, err := Addons(opts(catalog.ScenarioMolecularDynamics), AddonOptions{Kueue: k})
	var pe *planerr.Error
	if !errors.As(err, &pe) || pe.Path != "mpi.teams" || files != nil {
		t.Fatalf("Addons with 40 GPUs for a 32-GPU pool: %v (%T), %d files; want a plan error on mpi.teams", err, err, len(files))
	}
}

// TestKueueReleaseIsTheModules: the embedded release is what tools/kueuerelease renders from the
// sigs.k8s.io/kueue module at KueueVersion, so raising the version without re-rendering fails.
func TestKueueReleaseIsTheModules(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds kustomize and downloads the Kueue module")
	}
	dl := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/kueue@"+KueueVersion)
	dl.Dir = filepath.Join("..", "..", "tools", "kueuerelease")
	dl.Env = append(os.Environ(), "GOWORK=off")
	out, err := dl.Output()
	if err != nil {
		t.Fatalf("go mod download sigs.k8s.io/kueue@%s: %v", KueueVersion, err)
	}
	var mod struct{ Dir string }
	if err := yaml.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download: no Dir in %s (%v)", out, err)
	}
	run := exec.Command("go", "run", ".", mod.Dir)
	run.Dir = dl.Dir
	run.Env = dl.Env
	got, err := run.Output()
	if err != nil {
		t.Fatalf("go run ./tools/kueuerelease: %v", err)
	}
	if string(got) != kueueRelease {
		t.Errorf("releases/kueue.yaml (%d bytes) is not the release rendered from sigs.k8s.io/kueue@%s (%d bytes): run scripts/render-kueue-release.sh", len(kueueRelease), KueueVersion, len(got))
	}
}
