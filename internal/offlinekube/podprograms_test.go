package offlinekube

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// TestKueuePodProgram: the Kueue add-on's manager pod, as internal/manifests renders it, is one
// the table runs (its image in any registry), and prepareKueue turns it into the manager's
// process as the pod would run: the rendered configuration from the ConfigMap the container mounts
// at its --config path, with local ports, the certificate directory and the lease's namespace; the
// container's other arguments kept (the visibility server off); the service account's kubeconfig;
// the webhook's container port registered at the loopback address the configuration names; and
// the webhook Secret's keys written where the configuration says, once the rotator has filled it.
func TestKueuePodProgram(t *testing.T) {
	files, err := manifests.Addons(manifests.Options{Scenario: catalog.ScenarioMolecularDynamics, Nodes: 2, GPUsPerNode: 8,
		ImageRegistry: "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"},
		manifests.AddonOptions{MPIOperator: true, Kueue: &manifests.MPIOptions{Pools: []manifests.Pool{{Name: "md-a", Nodes: 2, GPUsPerNode: 8}}}})
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	var cm corev1.ConfigMap
	for _, f := range files {
		for _, d := range f.Docs {
			switch {
			case f.Name == manifests.AddonKueue && d.Kind == "Deployment":
				err = yaml.Unmarshal([]byte(d.YAML), &dep)
			case f.Name == manifests.AddonKueue && d.Kind == "ConfigMap" && d.Name == manifests.KueueConfigMapName:
				err = yaml.Unmarshal([]byte(d.YAML), &cm)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 || cm.Name == "" {
		t.Fatalf("no Kueue Deployment with one container and ConfigMap %s in the add-ons", manifests.KueueConfigMapName)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	prog := programFor(c.Image)
	if prog == nil || prog.binary != "kueue" {
		t.Fatalf("the table runs nothing for image %s", c.Image)
	}
	if programFor("registry.k8s.io/kueue/kueue:v0.17.0") != prog || programFor("registry.k8s.io/kueue/kueue-other:v0.17.0") != nil || programFor("busybox") != nil {
		t.Error("the table does not match Kueue's upstream image, or matches another image")
	}

	ns := dep.Namespace
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kueue-controller-manager-x", Namespace: ns, UID: "u1"}, Spec: dep.Spec.Template.Spec,
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.3"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kueue-webhook-server-cert", Namespace: ns}}
	client := fake.NewClientset(&cm, secret)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	run := &podRun{pod: pod, container: c, dir: t.TempDir(), client: client, kubeconfig: "/work/pod.kubeconfig", stop: cancel}
	l, err := prog.prepare(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	args, listens := l.args, l.listens
	cfgPath := filepath.Join(run.dir, "controller_manager_config.yaml")
	for _, want := range []string{"--config=" + cfgPath, "--kubeconfig=/work/pod.kubeconfig", "--feature-gates=VisibilityOnDemand=false", "--zap-log-level=2"} {
		if !slices.Contains(args, want) {
			t.Errorf("arguments %v lack %s", args, want)
		}
	}
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Webhook struct {
			Host, CertDir string
			Port          int
		} `json:"webhook"`
		Metrics          struct{ BindAddress string }       `json:"metrics"`
		LeaderElection   struct{ ResourceNamespace string } `json:"leaderElection"`
		WaitForPodsReady map[string]any                     `json:"waitForPodsReady"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	addr := listens[KueueWebhookPort]
	if cfg.Webhook.Host != "127.0.0.1" || !strings.HasSuffix(addr, ":"+strconv.Itoa(cfg.Webhook.Port)) || len(listens) != 1 {
		t.Errorf("webhook at %s:%d, registered %v: want the container port %d at the configured loopback address", cfg.Webhook.Host, cfg.Webhook.Port, listens, KueueWebhookPort)
	}
	if cfg.Metrics.BindAddress != "0" || cfg.LeaderElection.ResourceNamespace != ns || cfg.WaitForPodsReady == nil {
		t.Errorf("configuration not the rendered one made local (metrics off, lease in %s, gang admission kept):\n%s", ns, data)
	}
	// The rotator fills the Secret; the files follow, where the configuration points.
	secret.Data = map[string][]byte{"tls.crt": []byte("CERT"), "tls.key": []byte("KEY"), "ca.crt": []byte("CA")}
	if _, err := client.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(cfg.Webhook.CertDir, "tls.key"), "KEY")
}

// waitForFile waits (bounded by stepTimeout, a hang's bound) until path holds want.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
	defer cancel()
	for {
		if got, err := os.ReadFile(path); err == nil && string(got) == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never held %q", path, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
