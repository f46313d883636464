package controllertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

// What scripts/build-controllers.sh puts in ./bin: the two programs and the CRDs of the same
// module versions, copied from the Go module cache.
var (
	controllerBinaries = []string{"kueue", "mpi-operator"}
	crdDirs            = []string{"crds/kueue", "crds/mpi-operator"}
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// requireControllers fails the test (skips it only under testtools.AllowMissingEnv) when the
// controllers or their CRDs are not in binDir, naming the command that builds them.
func requireControllers(t *testing.T, binDir string) {
	t.Helper()
	var missing []string
	for _, b := range controllerBinaries {
		if info, err := os.Stat(filepath.Join(binDir, b)); err != nil || info.IsDir() {
			missing = append(missing, b)
		}
	}
	for _, d := range crdDirs {
		if files, _ := filepath.Glob(filepath.Join(binDir, d, "*.yaml")); len(files) == 0 {
			missing = append(missing, d+"/*.yaml")
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("%v not found in %s: run `make controllers` (scripts/build-controllers.sh builds Kueue and the MPI Operator into ./bin)", missing, binDir)
	if os.Getenv(testtools.AllowMissingEnv) != "" {
		t.Skipf("%s; skipped because %s is set", msg, testtools.AllowMissingEnv)
	}
	t.Fatalf("%s; to skip this test instead, set %s=1", msg, testtools.AllowMissingEnv)
}

// kueueConversionCRDs are the Kueue CRDs whose release manifest adds a conversion webhook
// (config/components/crd/patches at manifests.KueueVersion) and whose conversion stanza Kueue's
// internal certificate management fills with its CA; it waits until it has, so the CRDs must
// have the stanza. Nothing here asks for their old version, so the webhook is never called.
var kueueConversionCRDs = map[string]bool{
	"localqueues.kueue.x-k8s.io": true, "clusterqueues.kueue.x-k8s.io": true, "workloads.kueue.x-k8s.io": true,
	"cohorts.kueue.x-k8s.io": true, "multikueueclusters.kueue.x-k8s.io": true,
}

// installCRDs creates every CRD in binDir's crd directories and waits until each is Established.
func installCRDs(t *testing.T, dyn dynamic.Interface, binDir string) {
	t.Helper()
	ctx := t.Context()
	var names []string
	for _, d := range crdDirs {
		files, _ := filepath.Glob(filepath.Join(binDir, d, "*.yaml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			crd := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &crd.Object); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if kueueConversionCRDs[crd.GetName()] {
				conversion := map[string]any{"strategy": "Webhook", "webhook": map[string]any{
					"conversionReviewVersions": []any{"v1"},
					"clientConfig": map[string]any{"service": map[string]any{
						"namespace": manifests.KueueNamespace, "name": "kueue-webhook-service", "path": "/convert",
					}},
				}}
				if err := unstructured.SetNestedField(crd.Object, conversion, "spec", "conversion"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating CRD %s from %s: %v", crd.GetName(), f, err)
			}
			names = append(names, crd.GetName())
		}
	}
	for _, name := range names {
		waitFor(t, "CRD "+name+" Established", func(ctx context.Context) (bool, error) {
			crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return hasCondition(crd, "Established", "True"), nil
		})
	}
}

// controller is a program the test started; Stop ends it, and a failed test gets its log's end.
type controller struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

func startController(t *testing.T, name, binary, workDir string, args ...string) *controller {
	t.Helper()
	logPath := filepath.Join(workDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	c := &controller{name: name, cmd: exec.Command(binary, args...), log: logPath, done: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	c.cmd.SysProcAttr = sysProcAttr()
	t.Logf("starting %s %s", binary, strings.Join(args, " "))
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { c.done <- c.cmd.Wait(); _ = logFile.Close() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-c.done: // a controller stopped by SIGTERM may exit non-zero; not the test's concern
			c.done <- err
		case <-time.After(15 * time.Second):
			_ = c.cmd.Process.Kill()
			c.done <- <-c.done
		}
		if t.Failed() {
			t.Logf("%s log (%s), last lines:\n%s", name, logPath, tail(logPath, 40))
		}
	})
	return c
}

// exited reports whether the program has ended, for the waits that would otherwise outlast it.
func (c *controller) exited() error {
	select {
	case err := <-c.done:
		c.done <- err
		return fmt.Errorf("%w: %s (%v); its log:\n%s", errControllerExited, c.name, err, tail(c.log, 40))
	default:
		return nil
	}
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// startKueue runs the Kueue manager with the configuration internal/manifests renders (the
// kueue-manager-config ConfigMap), changed only where a process on a shared test machine must
// differ from the release's pod (offlinekube.KueueLocalConfig, as the offline cluster runs the
// add-on's pod). Kueue's internal certificate management stays on (its default): with it off the
// manager reads metrics certificates from a fixed /etc/kueue path. No
// webhook configuration is registered, so the API server never calls Kueue's webhooks; the
// rendered MPIJobs are created suspended, which is what Kueue's defaulting webhook would ensure.
// The certificate rotator keeps its CA and certificate in the Secret kueue-webhook-server-cert,
// which it updates but does not create: the release manifest has it, empty, and so does this test.
// It waits for the files to appear in the certificate directory, where the kubelet would mount the
// Secret: the test writes them there.
// The visibility API server (an aggregated API for pending workloads) is off, as in the add-on:
// it keeps its certificates in a fixed /visibility, and nothing here reads it.
func startKueue(t *testing.T, c *offlinekube.Cluster, binDir, workDir string, queues []manifests.Document) *controller {
	t.Helper()
	var rendered string
	for _, d := range queues {
		if d.Kind == "ConfigMap" && d.Name == manifests.KueueConfigMapName {
			rendered = d.YAML
		}
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(rendered), &cm); err != nil || cm.Data["controller_manager_config.yaml"] == "" {
		t.Fatalf("no rendered %s ConfigMap with controller_manager_config.yaml (%v)", manifests.KueueConfigMapName, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kueue-webhook-server-cert", Namespace: manifests.KueueNamespace}}
	if _, err := c.Client().CoreV1().Secrets(manifests.KueueNamespace).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	healthPort, certDir := freePort(t), filepath.Join(workDir, "kueue-certs")
	data, err := offlinekube.KueueLocalConfig([]byte(cm.Data["controller_manager_config.yaml"]), offlinekube.KueueLocal{
		HealthAddr: fmt.Sprintf("127.0.0.1:%d", healthPort), WebhookAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		CertDir: certDir, LeaseNamespace: manifests.KueueNamespace,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(workDir, "kueue-config.yaml")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("kueue configuration:\n%s", data)
	k := startController(t, "kueue", filepath.Join(binDir, "kueue"), workDir,
		"--config="+cfgPath, "--kubeconfig="+c.Kubeconfig(), "--feature-gates=VisibilityOnDemand=false", "--zap-log-level=2")
	waitFor(t, "kueue's webhook certificate in Secret "+secret.Name, func(ctx context.Context) (bool, error) {
		ok, err := offlinekube.SyncSecretFiles(ctx, c.Client(), manifests.KueueNamespace, secret.Name, certDir, "tls.crt", "tls.key")
		if err != nil || !ok {
			return false, errors.Join(err, k.exited())
		}
		return true, nil
	})
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)
	waitFor(t, "kueue "+readyz, func(ctx context.Context) (bool, error) {
		if err := k.exited(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyz, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet: poll again
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return k
}

// startMPIOperator runs the MPI Operator as the service account internal/manifests renders for it,
// with the rendered ClusterRole: a token of that account in a kubeconfig of its own, so a missing
// permission shows as the operator failing, as it would in the cluster. Its Deployment is not
// applied (no kubelet runs images here); the binary runs with the Deployment's arguments. The
// operator's health server listens on a fixed port (8080), which no other test uses.
func startMPIOperator(t *testing.T, c *offlinekube.Cluster, binDir, workDir string, operator []manifests.Document) *controller {
	t.Helper()
	var args []string
	for _, d := range operator {
		if d.Kind == "Deployment" {
			var dep struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Args []string `json:"args"`
							} `json:"containers"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal([]byte(d.YAML), &dep); err != nil || len(dep.Spec.Template.Spec.Containers) != 1 {
				t.Fatalf("the rendered MPI Operator Deployment: %v", err)
			}
			args = dep.Spec.Template.Spec.Containers[0].Args
			continue
		}
		apply(t, c, d)
	}
	kcPath := filepath.Join(workDir, "mpi-operator.kubeconfig")
	if err := c.ServiceAccountKubeconfig(t.Context(), manifests.MPIOperatorNamespace, manifests.MPIOperatorName, kcPath); err != nil {
		t.Fatal(err)
	}
	return startController(t, "mpi-operator", filepath.Join(binDir, "mpi-operator"), workDir,
		append([]string{"--kubeConfig=" + kcPath}, args...)...)
}

// waitFor polls until done says so, failing the test with what if it errors or the wait ends
// first. A wait, not a timed assertion: the limit only bounds a test that would otherwise hang.
func waitFor(t *testing.T, what string, done func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := done(ctx)
		if err != nil && !apierrors.IsNotFound(err) {
			if errors.Is(err, errControllerExited) {
				return false, err
			}
			if ctx.Err() == nil { // the wait's own end is not what went wrong
				last = err
			}
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

var errControllerExited = errors.New("controller exited")

func ptr[T any](v T) *T { return &v }
