// Package offlinekube starts and stops a real Kubernetes control plane on loopback, for tests that
// need the API server, the scheduler and the controllers to judge what the provider's clusters
// would do: etcd, kube-apiserver, kube-controller-manager and kube-scheduler, built from their
// upstream modules by `make kube` (scripts/build-kube.sh) into ./bin, and kwok, which stands in for
// the kubelets: it keeps Nodes annotated kwok.x-k8s.io/node=fake Ready and runs the Pods bound to
// them (without containers). The control plane can be of two releases (the current minor's and the
// previous one's, in ./bin/previous) and upgraded from one to the other while it runs
// (controlplane.go); its clients reach it through a front on one port (front.go).
//
// Every cluster is new: its own temporary work directory (certificates, etcd data, one log file per
// component), its own free loopback ports, its own CA (or one the test hands in). Stop ends every
// process. layout.go holds each component's flags, and why.
package offlinekube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// KwokNodeAnnotation is the annotation (with the value "fake") that hands a Node to kwok: kwok
// marks it Ready, renews its Lease and runs the Pods bound to it. A Node without it stays NotReady,
// like a machine whose kubelet never started.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// Binaries are the programs a cluster runs, looked up in Options.BinDir.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

const (
	// DefaultStartTimeout bounds Start when the context has no deadline: on a loaded 2-core
	// machine kube-apiserver takes several seconds to install its APIs.
	DefaultStartTimeout = 3 * time.Minute

	stopGrace = 10 * time.Second
)

// Options configure Start.
type Options struct {
	// BinDir holds the Binaries. Empty: the repository's ./bin (DefaultBinDir).
	BinDir string
	// WorkDir receives the certificates, etcd's data, the kubeconfigs and the logs. Empty: a new
	// temporary directory, removed by Stop. A given directory is kept.
	WorkDir string
	// Logf, when set, receives a line per step (a test passes t.Logf).
	Logf func(format string, args ...any)
	// CACertPEM and CAKeyPEM, when set, are the cluster CA instead of a new one: a test hands in
	// the CA the provider generated, so that the CA hash in its nodes' user data is this
	// cluster's. The key may be PKCS#8, PKCS#1 (RSA) or SEC 1 (EC) PEM.
	CACertPEM, CAKeyPEM []byte
	// RestoreEtcdFrom, when set, is an etcd snapshot file (etcdctl snapshot save, SnapshotEtcd)
	// that etcd's data directory is restored from before etcd starts (etcdsnapshot.go): the
	// control plane comes up on the snapshot's objects.
	RestoreEtcdFrom string
	// ControlPlaneVersion, when set, is the Kubernetes release ("v1.36.3") whose kube-apiserver,
	// kube-controller-manager and kube-scheduler the cluster starts on, one of
	// ControlPlaneReleases (BinDir's own or BinDir/previous's). Empty: BinDir's own.
	// UpgradeControlPlane moves a running cluster to another (controlplane.go).
	ControlPlaneVersion string
}

// Cluster is a running control plane. Its methods are safe to call from several goroutines.
type Cluster struct {
	workDir       string
	removeWorkDir bool
	binDir        string
	kubeconfig    string
	etcdURL       string
	caCertPEM     []byte
	restConfig    *rest.Config
	client        kubernetes.Interface
	logf          func(format string, args ...any)

	mu        sync.Mutex
	processes []*process // in start order; stopped in reverse
	layout    *layout
	apiFront  *front       // the cluster's API endpoint (front.go)
	etcdFront *front       // the cluster's etcd endpoint (front.go, etcdmembers.go)
	cp        controlPlane // the serving release's processes (controlplane.go)
	upgradeMu sync.Mutex   // one UpgradeControlPlane at a time
	// etcdMembers are etcd's members in the order they joined, guarded by etcdMu, which also
	// makes the membership changes one at a time (etcdmembers.go).
	etcdMu      sync.Mutex
	etcdMembers []*etcdMember
	network     *podNetwork // the API server's egress to Services and pods (podnet.go)
	// programs runs the pod programs (podprograms.go); stopPrograms ends them and returns once
	// they have stopped.
	programs     *podPrograms
	stopPrograms func()
	stopped      bool
}

// Start runs etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, in that order,
// and returns once the API server's /readyz is ok and the controller manager has created the
// default namespace's service account (pods cannot be created before). On error, every process
// it started is stopped again, and the error names the component and quotes the end of its log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	binDir := opts.BinDir
	if binDir == "" {
		var err error
		if binDir, err = DefaultBinDir(); err != nil {
			return nil, err
		}
	}
	if err := CheckBinaries(binDir); err != nil {
		return nil, err
	}
	c := &Cluster{logf: opts.Logf, workDir: opts.WorkDir, binDir: binDir}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
	}
	if c.workDir == "" {
		dir, err := os.MkdirTemp("", "offlinekube-")
		if err != nil {
			return nil, err
		}
		c.workDir, c.removeWorkDir = dir, true
	}
	for attempt := 1; ; attempt++ {
		err := c.start(ctx, binDir, opts)
		if err == nil {
			return c, nil
		}
		if attempt == portAttempts || !strings.Contains(err.Error(), "address already in use") {
			c.Stop()
			return nil, err
		}
		kept := c.stopForRetry(attempt)
		c.logf("offlinekube: a port was taken; starting again on others (the logs of attempt %d: %s)", attempt, kept)
	}
}

// portAttempts is how many times Start picks ports: they are free when picked, but another
// process may bind one before the component that was given it does.
const portAttempts = 3

// stopForRetry ends the components of a failed attempt and moves its logs to logs-attempt-N (the
// next attempt's errors quote only its own logs) and its etcd data away (etcd would keep the old
// peer URL; with Options.RestoreEtcdFrom the next attempt restores the snapshot again). It returns where the logs went.
func (c *Cluster) stopForRetry(attempt int) string {
	c.mu.Lock()
	processes, network, apiFront, etcdFront := c.processes, c.network, c.apiFront, c.etcdFront
	c.processes, c.network, c.apiFront, c.etcdFront = nil, nil, nil, nil
	c.mu.Unlock()
	stopAll(processes)
	network.close()
	apiFront.close()
	etcdFront.close()
	c.etcdMu.Lock()
	c.etcdMembers = nil
	c.etcdMu.Unlock()
	kept := filepath.Join(c.workDir, fmt.Sprintf("logs-attempt-%d", attempt))
	_ = os.Rename(filepath.Join(c.workDir, "logs"), kept)
	_ = os.RemoveAll(etcdDataDir(c.workDir))
	return kept
}

func (c *Cluster) start(ctx context.Context, binDir string, opts Options) error {
	begin := time.Now()
	cpDir, err := controlPlaneDir(binDir, opts.ControlPlaneVersion)
	if err != nil {
		return err
	}
	l, err := newLayout(c.workDir, opts.CACertPEM, opts.CAKeyPEM)
	if err != nil {
		return err
	}
	c.kubeconfig, c.etcdURL = l.kubeconfigs["admin"], l.etcdURL
	if opts.RestoreEtcdFrom != "" {
		if err := restoreEtcd(opts.RestoreEtcdFrom, etcdDataDir(l.workDir), l.etcdPeerURL); err != nil {
			return err
		}
	}
	c.caCertPEM = l.certs.caCertPEM
	c.restConfig = &rest.Config{
		Host: l.apiURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   l.certs.caCertPEM,
			CertData: l.certs.clientCertPEMs["admin"],
			KeyData:  l.certs.clientKeyPEMs["admin"],
		},
		// The tests create objects in bursts (a pool's Nodes); client-go's default 5 QPS would
		// make them wait for the client, not the cluster.
		QPS:   200,
		Burst: 400,
	}
	if c.client, err = kubernetes.NewForConfig(c.restConfig); err != nil {
		return fmt.Errorf("offlinekube: client: %w", err)
	}
	tlsConfig, err := podNetworkTLS(l.certs)
	if err != nil {
		return err
	}
	network, err := newPodNetwork(c.logf, tlsConfig)
	if err != nil {
		return err
	}
	network.setClient(c.client)
	c.mu.Lock()
	c.network = network
	c.mu.Unlock()
	if err := writeEgressSelectorConfig(l.egressSelectorFile, network.addr(), l.certs); err != nil {
		return err
	}
	run := func(name string, args, env []string) (*process, error) {
		dir := binDir
		if slices.Contains(controlPlaneBinaries, name) {
			dir = cpDir
		}
		return c.run(name, filepath.Join(dir, name), l.logDir, args, env)
	}
	apiFront, err := newFront("127.0.0.1:"+strconv.Itoa(l.apiPort), "127.0.0.1:"+strconv.Itoa(l.apiServerPort))
	if err != nil {
		return fmt.Errorf("offlinekube: the API endpoint: %w", err)
	}
	c.mu.Lock()
	c.apiFront, c.layout = apiFront, l
	c.mu.Unlock()
	etcdFront, err := newFront(strings.TrimPrefix(l.etcdURL, "http://"), strings.TrimPrefix(l.etcdMemberURL, "http://"))
	if err != nil {
		return fmt.Errorf("offlinekube: the etcd endpoint: %w", err)
	}
	c.mu.Lock()
	c.etcdFront = etcdFront
	c.mu.Unlock()

	etcd, err := run("etcd", l.etcdArgs(), nil)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, etcd, 100*time.Millisecond, httpOK(l.etcdURL+"/health")); err != nil {
		return err
	}
	c.etcdMu.Lock()
	c.etcdMembers = []*etcdMember{{name: etcdMemberName, clientURL: l.etcdMemberURL, peerURL: l.etcdPeerURL, dataDir: etcdDataDir(l.workDir), proc: etcd}}
	c.etcdMu.Unlock()
	c.logf("offlinekube: etcd ready on %s (%s)", l.etcdURL, time.Since(begin).Round(time.Millisecond))

	apiserver, err := run("kube-apiserver", l.apiServerArgs(l.apiServerPort), nil)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, apiserver, 200*time.Millisecond, apiReady(c.client)); err != nil {
		return err
	}
	c.logf("offlinekube: kube-apiserver ready on %s (%s)", l.apiURL, time.Since(begin).Round(time.Millisecond))

	// The rest find the API server ready; none waits for another.
	controllerManager, err := run("kube-controller-manager", l.controllerManagerArgs(), nil)
	if err != nil {
		return err
	}
	scheduler, err := run("kube-scheduler", l.schedulerArgs(), nil)
	if err != nil {
		return err
	}
	kwok, err := run("kwok", l.kwokArgs(), l.kwokEnv())
	if err != nil {
		return err
	}
	if err := waitFor(ctx, controllerManager, 200*time.Millisecond, c.defaultServiceAccountExists); err != nil {
		return err
	}
	for _, p := range []*process{scheduler, kwok} {
		if !p.running() {
			return p.failure(errExited)
		}
	}
	release, err := serverRelease(c.client)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cp = controlPlane{release: release, apiServer: apiserver, controllerManager: controllerManager, scheduler: scheduler}
	c.mu.Unlock()
	c.startPodPrograms(binDir, l.apiURL)
	c.logf("offlinekube: control plane ready in %s (work dir %s)", time.Since(begin).Round(time.Millisecond), c.workDir)
	return nil
}

// startPodPrograms runs the programs of the Pods whose images podProgramTable lists, until Stop.
func (c *Cluster) startPodPrograms(binDir, apiURL string) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &podPrograms{binDir: binDir, workDir: c.workDir, apiURL: apiURL, caCertPEM: c.caCertPEM,
		client: c.client, network: c.network, logf: c.logf, running: map[types.UID]*runningPod{}, failed: map[types.UID]string{}}
	done := make(chan struct{})
	go func() { r.run(ctx); close(done) }()
	c.mu.Lock()
	c.programs = r
	c.stopPrograms = func() { cancel(); <-done }
	c.mu.Unlock()
}

// run starts a component and records it for Stop.
func (c *Cluster) run(name, binary, logDir string, args, env []string) (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, fmt.Errorf("%s: the cluster is stopped", name)
	}
	p, err := startProcess(name, binary, logDir, args, env)
	if err != nil {
		return nil, err
	}
	c.processes = append(c.processes, p)
	return p, nil
}

// apiReady reports whether the API server client talks to answers /readyz with ok (every
// post-start hook done, the bootstrap RBAC policy and priority levels in place).
func apiReady(client kubernetes.Interface) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, err
		}
		return string(body) == "ok", nil
	}
}

// serverRelease is the release the API server reports at /version ("v1.37.2").
func serverRelease(client kubernetes.Interface) (string, error) {
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("offlinekube: the API server's /version: %w", err)
	}
	return v.GitVersion, nil
}

// defaultServiceAccountExists reports whether the controller manager's service-account controller
// has created default/default: the ServiceAccount admission plugin refuses Pods until then.
func (c *Cluster) defaultServiceAccountExists(ctx context.Context) (bool, error) {
	_, err := c.client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, errors.New("service account default/default not created yet")
	}
	return err == nil, err
}

// Stop ends every component (the last started first) and removes the work directory when Start
// created it. It is safe to call more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	processes, network, apiFront, etcdFront, stopPrograms := c.processes, c.network, c.apiFront, c.etcdFront, c.stopPrograms
	c.mu.Unlock()
	if stopPrograms != nil {
		stopPrograms() // before the API server they talk to
	}
	stopAll(processes)
	network.close()
	apiFront.close()
	etcdFront.close()
	if c.removeWorkDir {
		_ = os.RemoveAll(c.workDir)
	}
}

// stopAll stops processes, the last started first.
func stopAll(processes []*process) {
	for i := len(processes) - 1; i >= 0; i-- {
		processes[i].stop(stopGrace)
	}
}

// ServePodPort makes podIP:port (a Pod's IP and one of its container ports) reachable from the
// API server, at addr, a loopback address where the process playing that pod's container
// listens, until remove is called: the API server's calls to a Service whose ready endpoint it
// is (a webhook, an aggregated API) reach it there (podnet.go). An address nobody serves is
// refused, as an unreachable pod would be.
func (c *Cluster) ServePodPort(podIP string, port int, addr string) (remove func()) {
	c.mu.Lock()
	network := c.network
	c.mu.Unlock()
	if network == nil {
		return func() {}
	}
	return network.serve(podIP, port, addr)
}

// Kubeconfig is the path of a kubeconfig file for a cluster administrator (system:masters), with
// the certificates embedded: kubectl and client-go read it as it is.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// CACertPEM is the cluster CA's certificate (PEM): the API server's serving certificate and every
// client certificate chain to it.
func (c *Cluster) CACertPEM() []byte { return c.caCertPEM }

// RESTConfig is a client configuration for a cluster administrator (system:masters). The caller
// gets a copy it may change.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// Client is a clientset for a cluster administrator.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// WorkDir is the directory with the cluster's certificates, data and logs (logs/<component>.log).
func (c *Cluster) WorkDir() string { return c.workDir }

// CheckBinaries returns an error naming every one of the Binaries missing from binDir, and the
// command that builds them.
func CheckBinaries(binDir string) error {
	var missing []string
	for _, b := range Binaries {
		if info, err := os.Stat(filepath.Join(binDir, b)); err != nil || info.IsDir() {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("offlinekube: %v not found in %s: run `make kube` (scripts/build-kube.sh builds the test cluster into ./bin)", missing, binDir)
}

// DefaultBinDir is the bin directory of the repository that holds the working directory: the
// first parent with a go.mod, then bin. Tests run in their package's directory, so this is the
// repository's ./bin that `make kube` fills.
func DefaultBinDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("offlinekube: no go.mod above the working directory; set Options.BinDir")
		}
		dir = parent
	}
}

// httpOK is a readiness check: GET url answers 200.
func httpOK(url string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return true, nil
	}
}
