package offlinekube

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

const (
	// serviceCIDR holds the Services' cluster IPs; podCIDR the Pod IPs kwok hands out. Neither is
	// routed anywhere: nothing in the cluster sends a packet.
	serviceCIDR = "10.96.0.0/12"
	podCIDR     = "10.244.0.0/16"
)

// layout is where a cluster's components find each other and their files, and the flags each is
// started with.
type layout struct {
	workDir, logDir string
	// etcdURL is the cluster's etcd endpoint, a front that relays to a running member
	// (etcdmembers.go); etcdMemberURL and etcdPeerURL are the first member's own.
	etcdURL       string
	etcdMemberURL string
	etcdPeerURL   string
	// apiURL is the cluster's endpoint, the API front's port (apifront.go); apiServerPort is
	// where the first kube-apiserver serves behind it.
	apiURL         string
	apiPort        int
	apiServerPort  int
	certs          *pki
	kubeconfigs    map[string]string // identity name (see identities) -> kubeconfig file
	kwokStagesFile string
	// egressSelectorFile is the API server's egress configuration: the "cluster" context through
	// the pod network (podnet.go).
	egressSelectorFile string
}

// newLayout picks free loopback ports and writes the certificates, the kubeconfigs and kwok's
// stages into workDir.
func newLayout(workDir string, caCertPEM, caKeyPEM []byte) (*layout, error) {
	l := &layout{workDir: workDir, logDir: filepath.Join(workDir, "logs"), kubeconfigs: map[string]string{}}
	if err := os.MkdirAll(l.logDir, 0o700); err != nil {
		return nil, err
	}
	var err error
	if l.certs, err = newPKI(filepath.Join(workDir, "pki"), caCertPEM, caKeyPEM); err != nil {
		return nil, fmt.Errorf("offlinekube: certificates: %w", err)
	}
	// The API server's port is the last: TestCluster hands out a taken one there.
	ports, err := pickPorts(5)
	if err != nil {
		return nil, fmt.Errorf("offlinekube: free loopback ports: %w", err)
	}
	l.etcdURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	l.etcdMemberURL = "http://127.0.0.1:" + strconv.Itoa(ports[1])
	l.etcdPeerURL = "http://127.0.0.1:" + strconv.Itoa(ports[2])
	l.apiPort, l.apiServerPort = ports[3], ports[4]
	l.apiURL = "https://127.0.0.1:" + strconv.Itoa(l.apiPort)
	for name := range identities {
		path := filepath.Join(workDir, name+".kubeconfig")
		if err := writeKubeconfig(path, l.apiURL, l.certs, name); err != nil {
			return nil, fmt.Errorf("offlinekube: %s kubeconfig: %w", name, err)
		}
		l.kubeconfigs[name] = path
	}
	l.egressSelectorFile = filepath.Join(workDir, "egress-selector.yaml")
	l.kwokStagesFile = filepath.Join(workDir, "kwok-stages.yaml")
	if err := writeKwokStages(l.kwokStagesFile); err != nil {
		return nil, fmt.Errorf("offlinekube: kwok stages: %w", err)
	}
	return l, nil
}

// etcdArgs: the first member (tools/testkube/cmd/etcd, named etcdMemberName), its data in the
// work directory.
func (l *layout) etcdArgs() []string {
	return []string{
		"--data-dir=" + etcdDataDir(l.workDir),
		"--listen-client-url=" + l.etcdMemberURL,
		"--listen-peer-url=" + l.etcdPeerURL,
	}
}

// etcdDataDir is etcd's data directory in the work directory (stopForRetry removes it, a
// restore writes it).
func etcdDataDir(workDir string) string { return filepath.Join(workDir, "etcd") }

// apiServerArgs are the flags of a kube-apiserver serving on port; the cluster's first serves on
// apiServerPort, one an upgrade starts on a port of its own (upgrade.go).
func (l *layout) apiServerArgs(port int) []string {
	return []string{
		"--etcd-servers=" + l.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		// Where it would write a self-signed certificate; it has ours, but the flag keeps it out
		// of /var/run/kubernetes.
		"--cert-dir=" + filepath.Join(l.workDir, "apiserver-"+strconv.Itoa(port)),
		"--tls-cert-file=" + l.certs.servingCertFile,
		"--tls-private-key-file=" + l.certs.servingKeyFile,
		"--client-ca-file=" + l.certs.caCertFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.certs.serviceAccountPublicKeyFile,
		"--service-account-signing-key-file=" + l.certs.serviceAccountKeyFile,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=Node,RBAC",
		// Bootstrap tokens (Secrets of type bootstrap.kubernetes.io/token in kube-system)
		// authenticate as system:bootstrappers, as `kubeadm join --token` does.
		"--enable-bootstrap-token-auth=true",
		"--allow-privileged=true",
		// The default reconciler would publish 127.0.0.1 as the kubernetes Service's endpoint,
		// which the Endpoints validation refuses (loopback), every few seconds, in the log.
		"--endpoint-reconciler-type=none",
		// Its calls to webhooks and aggregated APIs behind Services reach the processes that play
		// their pods through the pod network's CONNECT proxy (podnet.go).
		"--egress-selector-config-file=" + l.egressSelectorFile,
	}
}

// clientComponentArgs are the flags the controller manager and the scheduler share: their identity,
// one instance (no leader election), and no HTTPS port (0), as nothing reads their health
// endpoints.
func (l *layout) clientComponentArgs(name string) []string {
	kubeconfig := l.kubeconfigs[name]
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	}
}

func (l *layout) controllerManagerArgs() []string {
	return append(l.clientComponentArgs("kube-controller-manager"),
		// kubeadm's set: every default controller, and the two that sign the cluster-info
		// ConfigMap with bootstrap tokens and delete expired tokens.
		"--controllers=*,bootstrapsigner,tokencleaner",
		// Each controller acts as its own service account, with the permissions the bootstrap
		// RBAC policy gives it, as in a kubeadm cluster.
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+l.certs.serviceAccountKeyFile,
		"--root-ca-file="+l.certs.caCertFile,
		// The CSR signer, so that a node agent can have a kubelet client certificate signed.
		"--cluster-signing-cert-file="+l.certs.caCertFile,
		"--cluster-signing-key-file="+l.certs.caKeyFile,
		"--service-cluster-ip-range="+serviceCIDR,
	)
}

func (l *layout) schedulerArgs() []string {
	return l.clientComponentArgs("kube-scheduler")
}

// kwokArgs: kwok manages only the Nodes annotated KwokNodeAnnotation=fake, with the stages in
// kwokstages/ (Ready at once, a Lease renewed within the controller manager's grace period, Pods
// Running with an IP from podCIDR, a Job's Pods Succeeded). It serves no port.
func (l *layout) kwokArgs() []string {
	return []string{
		"--kubeconfig=" + l.kubeconfigs["kwok"],
		"--config=" + l.kwokStagesFile,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=" + podCIDR,
	}
}

// kwokEnv: kwok also reads ~/.kwok/kwok.yaml when it exists; a home of its own keeps the
// developer's configuration out of the tests.
func (l *layout) kwokEnv() []string {
	return []string{"HOME=" + filepath.Join(l.workDir, "kwok-home")}
}

// pickPorts is freePorts; a test replaces it to hand out a port that is taken.
var pickPorts = freePorts

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
