package controllertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// hostListRE is mpirun's -H option in the rendered launcher script: host:slots, comma-separated.
var hostListRE = regexp.MustCompile(`(?:^|\s)-H\s+(\S+)`)

// assertHostfile checks that the hosts the rendered job names in its launcher's mpirun -H list are
// the hosts the real MPI Operator wrote into the job's hostfile. In v0.8.0 the operator writes
// ConfigMap <job>-config, key "hostfile", one "<host> slots=<n>" line per worker for OpenMPI
// (pkg/controller/mpi_job_controller.go newConfigMap; configSuffix "-config", hostfileName
// "hostfile"). The template names every node of the pool; teamJob may scale the job down to
// workers, so the hostfile must be the template's first workers hosts, in order.
func assertHostfile(t *testing.T, c *offlinekube.Cluster, job *unstructured.Unstructured, workers int) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "containers")
	var script []string
	for _, ct := range containers {
		m, _ := ct.(map[string]any)
		for _, key := range []string{"command", "args"} {
			words, _, _ := unstructured.NestedStringSlice(m, key)
			script = append(script, words...)
		}
	}
	match := hostListRE.FindStringSubmatch(strings.Join(script, "\n"))
	if match == nil {
		t.Fatalf("%s/%s: no mpirun -H list in the launcher: %q", job.GetNamespace(), job.GetName(), script)
	}
	var rendered []string
	for _, entry := range strings.Split(match[1], ",") {
		host, slots, ok := strings.Cut(entry, ":")
		if !ok {
			t.Fatalf("%s/%s: -H entry %q is not host:slots", job.GetNamespace(), job.GetName(), entry)
		}
		rendered = append(rendered, host+" slots="+slots)
	}
	if len(rendered) < workers {
		t.Fatalf("%s/%s: the template names %d hosts, the job runs %d workers: %v", job.GetNamespace(), job.GetName(), len(rendered), workers, rendered)
	}
	cm, err := c.Client().CoreV1().ConfigMaps(job.GetNamespace()).Get(t.Context(), job.GetName()+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the operator's hostfile ConfigMap of %s/%s: %v", job.GetNamespace(), job.GetName(), err)
	}
	hostfile := strings.Split(strings.TrimSpace(cm.Data["hostfile"]), "\n")
	if !slices.Equal(hostfile, rendered[:workers]) {
		t.Errorf("%s/%s: the operator's hostfile\n%s\ndiffers from the rendered template's hosts %v",
			job.GetNamespace(), job.GetName(), cm.Data["hostfile"], rendered[:workers])
	} else {
		t.Logf("%s/%s: the operator's hostfile matches the rendered -H list: %v", job.GetNamespace(), job.GetName(), hostfile)
	}
}

// reaperAccess is every API call the reaper's script (manifests.ReaperScript) makes in a
// namespace it covers: list its opted-in pods, delete a pod it owns alone, delete a pod's Job.
var reaperAccess = []authzv1.ResourceAttributes{
	{Verb: "list", Resource: "pods"},
	{Verb: "delete", Resource: "pods"},
	{Verb: "delete", Group: "batch", Resource: "jobs"},
}

// reaperAllowed asks the API server's authorizer (SubjectAccessReview, the real RBAC authorizer
// of the offline control plane) whether the reaper's ServiceAccount may make every call of
// reaperAccess in namespace, and returns the calls it may not.
func reaperAllowed(t *testing.T, c *offlinekube.Cluster, saNamespace, namespace string) []string {
	t.Helper()
	var denied []string
	for _, a := range reaperAccess {
		a.Namespace = namespace
		review, err := c.Client().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			ResourceAttributes: &a,
			User:               fmt.Sprintf("system:serviceaccount:%s:%s", saNamespace, manifests.ReaperName),
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !review.Status.Allowed {
			denied = append(denied, strings.TrimSuffix(a.Verb+" "+a.Resource+"."+a.Group, "."))
		}
	}
	return denied
}

// applyReaper applies the rendered add-on namespaces and the reaper's objects (AddonReaper) but
// its CronJob: a CronJob could start a run on a quarter hour in the middle of the test, so
// runReaper runs its container's script instead. It returns the namespace of the reaper's
// ServiceAccount and the CronJob.
func applyReaper(t *testing.T, c *offlinekube.Cluster, o manifests.Options) (string, *batchv1.CronJob) {
	t.Helper()
	files, err := manifests.Addons(o, manifests.AddonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saNamespace := ""
	var cron *batchv1.CronJob
	for _, f := range files {
		if f.Name != manifests.AddonNamespaces && f.Name != manifests.AddonReaper {
			continue
		}
		for _, d := range f.Docs {
			if d.Kind == "CronJob" {
				cron = &batchv1.CronJob{}
				if err := yaml.UnmarshalStrict([]byte(d.YAML), cron); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if d.Kind == "ServiceAccount" && d.Name == manifests.ReaperName {
				saNamespace = d.Namespace
			}
			apply(t, c, d)
		}
	}
	if saNamespace == "" || cron == nil || len(cron.Spec.JobTemplate.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s renders no ServiceAccount %s or no CronJob of one container", manifests.AddonReaper, manifests.ReaperName)
	}
	return saNamespace, cron
}

// runReaper runs the reaper's script as its CronJob would, against the offline API server with a
// token of the reaper's ServiceAccount: the CronJob's environment, with its envFrom ConfigMaps
// read from the API server (what the kubelet would inject), and MAX_RUNTIME_SECONDS 0 so every
// running opted-in pod is due; with dryRun it lists and deletes nothing. A call the API server
// refuses (403 for a namespace the reaper may not use, 400 for a body it rejects) raises, and the
// script fails. It returns the script's output.
func runReaper(t *testing.T, c *offlinekube.Cluster, saNamespace string, cron *batchv1.CronJob, dryRun bool) string {
	t.Helper()
	py := testtools.Require(t, "python3", "python3")
	dir := t.TempDir()
	tok, err := c.Client().CoreV1().ServiceAccounts(saNamespace).CreateToken(t.Context(), manifests.ReaperName,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for the reaper's service account: %v", err)
	}
	for name, content := range map[string][]byte{"reaper.py": []byte(manifests.ReaperScript), "token": []byte(tok.Status.Token), "ca.crt": c.CACertPEM()} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ct := cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	env := []string{"API_SERVER=" + c.RESTConfig().Host, "SA_DIR=" + dir, fmt.Sprintf("DRY_RUN=%v", dryRun)}
	for _, from := range ct.EnvFrom {
		cm, err := c.Client().CoreV1().ConfigMaps(saNamespace).Get(t.Context(), from.ConfigMapRef.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the reaper's envFrom ConfigMap %s: %v", from.ConfigMapRef.Name, err)
		}
		for k, v := range cm.Data {
			env = append(env, k+"="+v)
		}
	}
	for _, e := range ct.Env {
		if e.Name == "MAX_RUNTIME_SECONDS" {
			e.Value = "0"
		}
		env = append(env, e.Name+"="+e.Value)
	}
	cmd := exec.CommandContext(t.Context(), py, filepath.Join(dir, "reaper.py"))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the reaper failed: %v\nenvironment %v\n%s", err, env[2:], out)
	}
	t.Logf("the reaper (dry run %v, every opted-in pod due):\n%s", dryRun, out)
	return string(out)
}

// assertReaperCoversTeams checks, with the API server's own authorizer, that the reaper may make
// every call of its script in each team's namespace, and that the check can fail: a namespace that
// is no team's is denied. Were the renderer to drop a team's access (or a team), that team's
// namespace would be denied like the outsider and the test fails naming it and the calls.
func assertReaperCoversTeams(t *testing.T, c *offlinekube.Cluster, saNamespace string, teams map[string]manifests.Team) {
	t.Helper()
	for name, team := range teams {
		if denied := reaperAllowed(t, c, saNamespace, team.Namespace); len(denied) > 0 {
			t.Errorf("team %s: the reaper may not %v in namespace %s, so it never reclaims the team's opted-in jobs", name, denied, team.Namespace)
		}
	}
	const outsider = "no-team-here"
	if denied := reaperAllowed(t, c, saNamespace, outsider); len(denied) != len(reaperAccess) {
		t.Errorf("the reaper may make some of its calls in %s, which is no team's namespace (denied only %v): the check above cannot fail", outsider, denied)
	}
}
