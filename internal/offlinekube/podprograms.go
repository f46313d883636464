package offlinekube

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// kwok runs no containers: a Pod it marks Running does nothing. For the few images whose program
// the cluster needs to answer (a webhook server the API server calls), podPrograms runs the real
// program, built into the bin directory, as that Pod's container: with what the kubelet would
// have mounted written into a directory of its own, the Pod's service account's token, its
// listening ports moved to free loopback ports and registered with the pod network (podnet.go)
// for the Pod's IP and container ports. It stops the program when the Pod stops running or goes,
// and with the cluster.

// podProgram is one row of the table: which image it plays, and either with which binary and how
// the container's arguments and files become a local process's, or with which handler this
// process answers the container's ports (an image whose program stands for hardware the offline
// nodes lack: dcgm-exporter reads GPUs).
type podProgram struct {
	// image is the images table's name of the image: matched as its upstream name or its name in
	// a mirror registry (images.Image.MirrorName: <registry>/<Short>), whatever the tag.
	image  string
	binary string
	// prepare writes the container's files under dir and says how the binary is started.
	prepare func(ctx context.Context, p *podRun) (launch, error)
	// serve, for a row without a binary, answers every container port of the container.
	serve func(ctx context.Context, p *podRun) (http.Handler, error)
}

// launch is how a row's binary is started for a Pod: its arguments, its environment (added to
// this process's) and its listening ports: container port -> the loopback address the program
// was told to use.
type launch struct {
	args, env []string
	listens   map[int]string
}

// podProgramTable is every image the offline cluster runs a program for. The MPI Operator serves
// nothing the API server calls, so it is not here yet.
var podProgramTable = []podProgram{
	{image: images.Kueue, binary: "kueue", prepare: prepareKueue},
	// The GPU rows (gpunode.go) need their node's host (Cluster.SetNodeHosts).
	{image: images.DCGMExporter, serve: serveDCGMExporter},
	{image: images.GPUHealthAgent, binary: "gpucluster-gpu-health-agent", prepare: prepareGPUHealthAgent},
}

// programFor is the table's row for a container image reference, or nil.
func programFor(image string) *podProgram {
	name := image
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	for i := range podProgramTable {
		img := images.Get(podProgramTable[i].image)
		if name == img.Upstream() || name[strings.LastIndexByte(name, '/')+1:] == img.Short() {
			return &podProgramTable[i]
		}
	}
	return nil
}

// podRun is what a program's prepare gets: the Pod, its container, a directory of its own, the
// cluster's client and a kubeconfig that authenticates as the Pod's service account.
type podRun struct {
	pod        *corev1.Pod
	container  corev1.Container
	dir        string
	client     kubernetes.Interface
	kubeconfig string
	// stop ends the background work prepare started (a mounted Secret's refresh).
	stop context.CancelFunc
	// host is the Pod's node's host (Cluster.SetNodeHosts), or why there is none.
	host func(ctx context.Context) (NodeHost, error)
	// hostProxy is the pod network as the node's host network reaches it, an HTTP proxy URL
	// (podNetwork.hostProxyURL): what a host-network program dials pods through.
	hostProxy string
}

// podPrograms runs the table's programs for the cluster's Pods.
type podPrograms struct {
	binDir, workDir string
	apiURL          string
	caCertPEM       []byte
	client          kubernetes.Interface
	network         *podNetwork
	logf            func(format string, args ...any)

	mu      sync.Mutex
	running map[types.UID]*runningPod
	failed  map[types.UID]string // why a pod's program did not start, logged once per reason
	hosts   func(node *corev1.Node) (NodeHost, bool)
}

type runningPod struct {
	proc    *process     // nil for a row served in this process
	server  *http.Server // that row's server
	removes []func()
	stop    context.CancelFunc
}

// podProgramsPoll is how often the Pods are listed; kwok marks a Pod Running within a second or so.
const podProgramsPoll = time.Second

// run polls the Pods until ctx ends, then stops every program.
func (r *podPrograms) run(ctx context.Context) {
	t := time.NewTicker(podProgramsPoll)
	defer t.Stop()
	for {
		r.sync(ctx)
		select {
		case <-ctx.Done():
			r.stopAll()
			return
		case <-t.C:
		}
	}
}

// sync starts a program for each Running Pod with an IP whose image is in the table, and stops
// the programs of the Pods that are no longer so.
func (r *podPrograms) sync(ctx context.Context) {
	pods, err := r.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		return
	}
	want := map[types.UID]bool{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.PodIP == "" || pod.DeletionTimestamp != nil {
			continue
		}
		for _, c := range pod.Spec.Containers {
			prog := programFor(c.Image)
			if prog == nil {
				continue
			}
			want[pod.UID] = true
			r.mu.Lock()
			_, started := r.running[pod.UID]
			r.mu.Unlock()
			if !started {
				if err := r.start(ctx, pod, c, prog); err != nil && r.newFailure(pod.UID, err) {
					r.logf("offlinekube: pod %s/%s: %s: %v", pod.Namespace, pod.Name, prog.image, err)
				}
			}
		}
	}
	r.mu.Lock()
	var gone []*runningPod
	for uid, rp := range r.running {
		if !want[uid] {
			gone = append(gone, rp)
			delete(r.running, uid)
		}
	}
	r.mu.Unlock()
	for _, rp := range gone {
		rp.end()
	}
}

// newFailure records why a pod's program did not start and says whether that reason is new: the
// start is tried again every round, and each reason is logged once. SetNodeHosts forgets them
// from another goroutine.
func (r *podPrograms) newFailure(uid types.UID, err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed[uid] == err.Error() {
		return false
	}
	r.failed[uid] = err.Error()
	return true
}

// start runs prog for the Pod's container c and registers its ports.
func (r *podPrograms) start(ctx context.Context, pod *corev1.Pod, c corev1.Container, prog *podProgram) error {
	binary := filepath.Join(r.binDir, prog.binary)
	if prog.binary != "" {
		if _, err := os.Stat(binary); err != nil {
			return fmt.Errorf("%w: run `make kube controllers`; the pod runs without its program", err)
		}
	}
	name := fmt.Sprintf("pod-%s-%s-%s", pod.Namespace, pod.Name, c.Name)
	dir := filepath.Join(r.workDir, "pods", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	kubeconfig, err := r.serviceAccountKubeconfig(ctx, pod, dir)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(context.Background())
	run := &podRun{pod: pod, container: c, dir: dir, client: r.client, kubeconfig: kubeconfig, stop: stop,
		host:      func(ctx context.Context) (NodeHost, error) { return r.nodeHost(ctx, pod.Spec.NodeName) },
		hostProxy: r.network.hostProxyURL()}
	rp, listens, err := r.launch(runCtx, run, binary, name, prog)
	if err != nil {
		stop()
		return err
	}
	rp.stop = stop
	for port, addr := range listens {
		rp.removes = append(rp.removes, r.network.serve(pod.Status.PodIP, port, addr))
	}
	r.mu.Lock()
	r.running[pod.UID] = rp
	r.mu.Unlock()
	return nil
}

// launch starts the row's binary, or its handler on a loopback port of this process for every
// container port, and answers where each container port is served.
func (r *podPrograms) launch(ctx context.Context, run *podRun, binary, name string, prog *podProgram) (*runningPod, map[int]string, error) {
	pod := run.pod
	if prog.serve != nil {
		h, err := prog.serve(ctx, run)
		if err != nil {
			return nil, nil, err
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(l) }()
		listens := map[int]string{}
		for _, p := range run.container.Ports {
			listens[int(p.ContainerPort)] = l.Addr().String()
		}
		r.logf("offlinekube: pod %s/%s is served here on %s", pod.Namespace, pod.Name, l.Addr())
		return &runningPod{server: srv}, listens, nil
	}
	l, err := prog.prepare(ctx, run)
	if err != nil {
		return nil, nil, err
	}
	proc, err := startProcess(name, binary, filepath.Join(r.workDir, "logs"), l.args, l.env)
	if err != nil {
		return nil, nil, err
	}
	r.logf("offlinekube: pod %s/%s runs %s (log %s)", pod.Namespace, pod.Name, binary, proc.logPath)
	return &runningPod{proc: proc}, l.listens, nil
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the Pod's service account, bound
// to the Pod (what the kubelet's projected token gives the container), so that the program has
// the permissions the manifests grant it, no more.
func (r *podPrograms) serviceAccountKubeconfig(ctx context.Context, pod *corev1.Pod, dir string) (string, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	path := filepath.Join(dir, "kubeconfig")
	bound := &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	return path, writeServiceAccountKubeconfig(ctx, r.client, r.apiURL, r.caCertPEM, pod.Namespace, sa, bound, path)
}

// ServiceAccountKubeconfig writes to path a kubeconfig that authenticates to the cluster as
// service account namespace/name, with a token of the API server's default lifetime: a program
// run with it has exactly what the RBAC objects grant that account.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, namespace, name, path string) error {
	return writeServiceAccountKubeconfig(ctx, c.client, c.restConfig.Host, c.caCertPEM, namespace, name, nil, path)
}

// writeServiceAccountKubeconfig asks the API server for a token of service account
// namespace/name (bound to an object when bound is not nil) and writes a kubeconfig with it.
func writeServiceAccountKubeconfig(ctx context.Context, client kubernetes.Interface, apiURL string, caCertPEM []byte,
	namespace, name string, bound *authv1.BoundObjectReference, path string) error {
	tok, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{BoundObjectRef: bound},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("a token for service account %s/%s: %w", namespace, name, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["offline"] = &clientcmdapi.Cluster{Server: apiURL, CertificateAuthorityData: caCertPEM}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "offline", AuthInfo: name, Namespace: namespace}
	kc.CurrentContext = name
	return clientcmd.WriteToFile(*kc, path)
}

// end stops the program and unregisters its ports.
func (rp *runningPod) end() {
	for _, remove := range rp.removes {
		remove()
	}
	rp.stop()
	if rp.proc != nil {
		rp.proc.stop(stopGrace)
	}
	if rp.server != nil {
		_ = rp.server.Close()
	}
}

func (r *podPrograms) stopAll() {
	r.mu.Lock()
	running := r.running
	r.running = map[types.UID]*runningPod{}
	r.mu.Unlock()
	for _, rp := range running {
		rp.end()
	}
}
