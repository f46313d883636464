package offlinekube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// KueueWebhookPort is the container port of the manager's webhook server (the release's
// Deployment, port webhook-server, and its configuration's webhook.port): the one the API
// server calls through kueue-webhook-service.
const KueueWebhookPort = 9443

// KueueLocal is where a Kueue manager running as a process on a shared machine must differ from
// the release's pod: its own loopback ports, the webhook server's certificates in a directory of
// its own (the pod has them where the kubelet mounts the Secret), and the leader election lease's
// namespace (in the pod, its own namespace; out of it, it must be named).
type KueueLocal struct {
	HealthAddr     string // host:port of the health probes
	WebhookAddr    string // host:port of the webhook server
	CertDir        string
	LeaseNamespace string
}

// KueueLocalConfig is the manager configuration (controller_manager_config.yaml of the
// kueue-manager-config ConfigMap) changed only as local says, and with metrics off (their
// server binds a fixed port and reads certificates from a fixed /etc/kueue path). Everything else,
// the integrations, the gang admission, the certificate management, stays the rendered one's.
func KueueLocalConfig(managerConfig []byte, local KueueLocal) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(managerConfig, &cfg); err != nil {
		return nil, fmt.Errorf("kueue manager configuration: %w", err)
	}
	host, portText, err := net.SplitHostPort(local.WebhookAddr)
	if err != nil {
		return nil, fmt.Errorf("webhook address: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("webhook address %q: %w", local.WebhookAddr, err)
	}
	cfg["health"] = map[string]any{"healthProbeBindAddress": local.HealthAddr}
	cfg["metrics"] = map[string]any{"bindAddress": "0"}
	if le, ok := cfg["leaderElection"].(map[string]any); ok {
		le["resourceNamespace"] = local.LeaseNamespace
	}
	cfg["webhook"] = map[string]any{"host": host, "port": port, "certDir": local.CertDir}
	return yaml.Marshal(cfg)
}

// SyncSecretFiles writes the Secret's keys as files into dir, as the kubelet keeps a Secret volume
// up to date, once the Secret has every key in want; it reports whether it wrote (false: not yet).
// Kueue's certificate rotator fills its Secret, then waits for the files where the pod mounts it.
func SyncSecretFiles(ctx context.Context, client kubernetes.Interface, namespace, name, dir string, want ...string) (bool, error) {
	s, err := client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, k := range want {
		if len(s.Data[k]) == 0 {
			return false, nil
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	for k, data := range s.Data {
		path := filepath.Join(dir, k)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return false, err
		}
	}
	return true, nil
}

// kueueSecretRefresh is how often a running manager's certificate Secret is copied to its
// directory again (the kubelet refreshes Secret volumes periodically too).
const kueueSecretRefresh = time.Second

// prepareKueue plays the kueue-controller-manager pod: its configuration from the ConfigMap the
// container mounts at its --config path, made local (KueueLocalConfig), its certificate directory
// filled from the Secret volume it mounts, kept in sync while the program runs; its container
// arguments otherwise as they are, with the service account's kubeconfig.
func prepareKueue(ctx context.Context, p *podRun) (launch, error) {
	var args []string
	var configPath string
	for _, a := range p.container.Args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			configPath = v
			continue
		}
		args = append(args, a)
	}
	if configPath == "" {
		return launch{}, errors.New("the container has no --config argument")
	}
	managerConfig, err := mountedConfigMapFile(ctx, p, configPath)
	if err != nil {
		return launch{}, err
	}
	secret := mountedSecret(p)
	if secret == "" {
		return launch{}, errors.New("the container mounts no Secret for its webhook certificates")
	}
	ports, err := freePorts(2)
	if err != nil {
		return launch{}, err
	}
	webhookAddr := fmt.Sprintf("127.0.0.1:%d", ports[1])
	certDir := filepath.Join(p.dir, "serving-certs")
	cfg, err := KueueLocalConfig(managerConfig, KueueLocal{
		HealthAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]), WebhookAddr: webhookAddr,
		CertDir: certDir, LeaseNamespace: p.pod.Namespace,
	})
	if err != nil {
		return launch{}, err
	}
	cfgPath := filepath.Join(p.dir, "controller_manager_config.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return launch{}, err
	}
	go func() {
		for {
			_, _ = SyncSecretFiles(ctx, p.client, p.pod.Namespace, secret, certDir, "tls.crt", "tls.key")
			select {
			case <-ctx.Done():
				return
			case <-time.After(kueueSecretRefresh):
			}
		}
	}()
	args = append([]string{"--config=" + cfgPath, "--kubeconfig=" + p.kubeconfig}, args...)
	return launch{args: args, listens: map[int]string{KueueWebhookPort: webhookAddr}}, nil
}

// mountedConfigMapFile reads the file the container sees at path: a ConfigMap volume mounted
// there with subPath (the key), or mounted at its directory (the key is the file name).
func mountedConfigMapFile(ctx context.Context, p *podRun, path string) ([]byte, error) {
	for _, m := range p.container.VolumeMounts {
		key := m.SubPath
		if m.MountPath != path {
			if filepath.Dir(path) != filepath.Clean(m.MountPath) {
				continue
			}
			key = filepath.Base(path)
		}
		v := podVolume(p.pod, m.Name)
		if v == nil || v.ConfigMap == nil {
			continue
		}
		cm, err := p.client.CoreV1().ConfigMaps(p.pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s mounted at %s: %w", v.ConfigMap.Name, path, err)
		}
		if data, ok := cm.Data[key]; ok {
			return []byte(data), nil
		}
		return nil, fmt.Errorf("ConfigMap %s/%s has no key %s (mounted at %s)", p.pod.Namespace, v.ConfigMap.Name, key, path)
	}
	return nil, fmt.Errorf("no ConfigMap volume mounted at %s", path)
}

// mountedSecret is the name of the Secret volume the container mounts, or "".
func mountedSecret(p *podRun) string {
	for _, m := range p.container.VolumeMounts {
		if v := podVolume(p.pod, m.Name); v != nil && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	return ""
}

func podVolume(pod *corev1.Pod, name string) *corev1.Volume {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	return nil
}
