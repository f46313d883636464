package offlinekube

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

const (
	gpuResource = corev1.ResourceName("nvidia.com/gpu")
	gpuTaintKey = "nvidia.com/gpu"
	gpuLabelKey = "gpucluster.example/accelerator"
	// How long a step may take on a loaded 2-core machine before the test reports it as not
	// happening: a bound for a hang, not a measure of speed (BenchmarkStart measures).
	stepTimeout = 90 * time.Second
)

// TestCluster starts one cluster, with a CA the test hands in as a provider-made one would be,
// and checks what later tests build on.
func TestCluster(t *testing.T) {
	caCert, caKey := rsaCA(t)
	// The first ports handed out include one another process has bound meanwhile, for the API
	// server: Start must try again on other ports.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	pickPorts = func(n int) ([]int, error) {
		pickPorts = freePorts
		ports, err := freePorts(n)
		if err == nil {
			ports[n-1] = taken.Addr().(*net.TCPAddr).Port
		}
		return ports, err
	}
	defer func() { pickPorts = freePorts }()

	c := StartT(t, Options{CACertPEM: caCert, CAKeyPEM: caKey})
	if !bytes.Equal(c.CACertPEM(), caCert) {
		t.Fatalf("CACertPEM() is not the CA handed in")
	}
	firstLog, err := os.ReadFile(filepath.Join(c.WorkDir(), "logs-attempt-1", "kube-apiserver.log"))
	if err != nil || !strings.Contains(string(firstLog), "address already in use") {
		t.Errorf("no first attempt whose API server found its port taken (%v):\n%s", err, firstLog)
	}
	// The clients trust only that CA (RESTConfig's CAData), so every call below also checks that
	// the API server serves a certificate it signed.
	t.Run("GPUPodsScheduledOnKwokNode", func(t *testing.T) { testGPUPodsScheduledOnKwokNode(t, c) })
	t.Run("BootstrapTokenAuthenticates", func(t *testing.T) { testBootstrapTokenAuthenticates(t, c) })
	t.Run("WebhookThroughPodNetwork", func(t *testing.T) { testWebhookThroughPodNetwork(t, c) })

	c.Stop()
	if left := ProcessesMentioning(c.WorkDir()); len(left) > 0 {
		t.Errorf("processes left running after Stop: %v", left)
	}
}

// testGPUPodsScheduledOnKwokNode drives the whole control plane: a kwok Node with GPU capacity and
// a GPU taint becomes Ready (kwok), a Deployment's pod that tolerates the taint and asks for a GPU
// is bound to it (kube-scheduler) and Running (kwok), a Job's pod runs to completion (the Job
// controller in kube-controller-manager, then kwok), and a pod without the toleration stays
// Pending with the taint as the scheduler's reason.
func testGPUPodsScheduledOnKwokNode(t *testing.T, c *Cluster) {
	ctx := t.Context()
	client := c.Client()

	node := gpuNode("gpu-node-0", 8)
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	waitUntil(t, "node gpu-node-0 Ready", func(ctx context.Context) (bool, string, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, "gpu-node-0", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return nodeReady(n), fmt.Sprintf("conditions %v", n.Status.Conditions), nil
	})
	n, err := client.CoreV1().Nodes().Get(ctx, "gpu-node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Status.Allocatable[gpuResource]; got.Value() != 8 {
		t.Fatalf("node allocatable %s = %s, want 8 (kwok keeps the capacity the node was created with)", gpuResource, got.String())
	}

	ns := "gpu-jobs"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	// Pods need the namespace's default service account (ServiceAccount admission).
	waitUntil(t, "service account "+ns+"/default", func(ctx context.Context) (bool, string, error) {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})

	if _, err := client.AppsV1().Deployments(ns).Create(ctx, gpuDeployment("trainer", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	pod := waitForPod(t, client, ns, "app=trainer", corev1.PodRunning)
	if pod.Spec.NodeName != "gpu-node-0" {
		t.Fatalf("trainer pod %s bound to %q, want gpu-node-0", pod.Name, pod.Spec.NodeName)
	}
	if pod.Status.PodIP == "" {
		t.Errorf("trainer pod %s is Running without a pod IP", pod.Name)
	}

	// A Job's pod labeled RunUntilDeletedLabel is left running: it runs before the validate Job's
	// pod below and is still Running once that one has Succeeded (kwok would complete both after
	// the same delay).
	held := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "held"}, Spec: batchv1.JobSpec{BackoffLimit: new(int32(0)), Template: gpuPodTemplate("held", true)}}
	held.Spec.Template.Labels[RunUntilDeletedLabel] = "true"
	held.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create job: %v", err)
	}
	heldPod := waitForPod(t, client, ns, "app=held", corev1.PodRunning)

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "validate"},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template:     gpuPodTemplate("validate", true),
		},
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create job: %v", err)
	}
	waitUntil(t, "job validate complete", func(ctx context.Context) (bool, string, error) {
		j, err := client.BatchV1().Jobs(ns).Get(ctx, "validate", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return j.Status.Succeeded == 1, fmt.Sprintf("active %d, succeeded %d, failed %d", j.Status.Active, j.Status.Succeeded, j.Status.Failed), nil
	})
	jobPods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=validate"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobPods.Items) != 1 || jobPods.Items[0].Spec.NodeName != "gpu-node-0" {
		t.Fatalf("job pods %s, want one on gpu-node-0", podPlacements(jobPods.Items))
	}
	if p, err := client.CoreV1().Pods(ns).Get(ctx, heldPod.Name, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if p.Status.Phase != corev1.PodRunning {
		t.Errorf("the pod labeled %s is %s after the validate Job completed, want Running", RunUntilDeletedLabel, p.Status.Phase)
	}

	// The negative: the same pod without the toleration must not land on the GPU node.
	untolerated := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "no-toleration"}, Spec: gpuPodTemplate("no-toleration", false).Spec}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, untolerated, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	waitUntil(t, "pod no-toleration reported unschedulable", func(ctx context.Context) (bool, string, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "no-toleration", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		if p.Spec.NodeName != "" {
			return false, "", fmt.Errorf("pod without the GPU toleration bound to %s", p.Spec.NodeName)
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
				if !strings.Contains(cond.Message, "untolerated taint") {
					return false, "", fmt.Errorf("unschedulable for another reason: %s", cond.Message)
				}
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("conditions %v", p.Status.Conditions), nil
	})
}

// testBootstrapTokenAuthenticates: a bootstrap token Secret, as `kubeadm token create` writes it,
// authenticates its bearer as system:bootstrap:<id> in system:bootstrappers, the identity
// `kubeadm join --token` uses before the node has a certificate.
func testBootstrapTokenAuthenticates(t *testing.T, c *Cluster) {
	ctx := t.Context()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id":                       "abcdef",
			"token-secret":                   "0123456789abcdef",
			"usage-bootstrap-authentication": "true",
			"auth-extra-groups":              "system:bootstrappers:kubeadm:default-node-token",
		},
	}
	if _, err := c.Client().CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create bootstrap token: %v", err)
	}
	config := c.RESTConfig()
	config.CertData, config.KeyData = nil, nil
	config.BearerToken = "abcdef.0123456789abcdef"
	joiner, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	review, err := joiner.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the bootstrap token does not authenticate: %v", err)
	}
	user := review.Status.UserInfo
	if user.Username != "system:bootstrap:abcdef" || !slices.Contains(user.Groups, "system:bootstrappers") {
		t.Fatalf("bootstrap token authenticated as %q in %v, want system:bootstrap:abcdef in system:bootstrappers", user.Username, user.Groups)
	}

	config.BearerToken = "abcdef.wrongsecret00000"
	stranger, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stranger.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a token with the wrong secret: %v, want 401 Unauthorized", err)
	}
}

// rsaCA is a self-signed RSA CA in the PEM forms kubeadm writes (a PKCS#1 key), unlike the
// ECDSA PKCS#8 one Start generates: both paths of the CA handling are exercised.
func rsaCA(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// gpuNode is a Node the way a GPU worker registers: kwok-managed, labelled, tainted so that only
// pods tolerating the GPU taint land on it, and with the capacity its kubelet and the NVIDIA
// device plugin would report.
func gpuNode(name string, gpus int64) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("96"),
		corev1.ResourceMemory: resource.MustParse("768Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		gpuResource:           *resource.NewQuantity(gpus, resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, gpuLabelKey: "nvidia-h100"},
		},
		Spec: corev1.NodeSpec{
			Taints: []corev1.Taint{{Key: gpuTaintKey, Value: "present", Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// gpuPodTemplate asks for one GPU on a node with the accelerator label; tolerate adds the
// toleration for the GPU taint.
// gpuDeployment is name's Deployment of replicas GPU pods that tolerate the GPU taint.
func gpuDeployment(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: gpuPodTemplate(name, true),
		},
	}
}

func gpuPodTemplate(app string, tolerate bool) corev1.PodTemplateSpec {
	spec := corev1.PodSpec{
		NodeSelector: map[string]string{gpuLabelKey: "nvidia-h100"},
		Containers: []corev1.Container{{
			Name:  "main",
			Image: "registry.example/trainer:1",
			Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{gpuResource: resource.MustParse("1")},
			},
		}},
	}
	if tolerate {
		spec.Tolerations = []corev1.Toleration{{Key: gpuTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: spec}
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitForPod waits for a pod matching selector to reach phase and returns it.
func waitForPod(t *testing.T, client kubernetes.Interface, ns, selector string, phase corev1.PodPhase) corev1.Pod {
	t.Helper()
	var found corev1.Pod
	waitUntil(t, fmt.Sprintf("a pod %s in %s %s", selector, ns, phase), func(ctx context.Context) (bool, string, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, "", err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == phase {
				found = p
				return true, "", nil
			}
		}
		return false, "pods " + podPlacements(pods.Items), nil
	})
	return found
}

func podPlacements(pods []corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		parts = append(parts, fmt.Sprintf("%s on %q %s", p.Name, p.Spec.NodeName, p.Status.Phase))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// waitUntil polls check until it reports done, fails on its error, and on timeout fails with what
// was being waited for and the last state check described.
func waitUntil(t *testing.T, what string, check func(context.Context) (done bool, state string, err error)) {
	t.Helper()
	var state string
	var checkErr error
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, stepTimeout, true, func(ctx context.Context) (bool, error) {
		done, s, err := check(ctx)
		state, checkErr = s, err
		return done || err != nil, nil
	})
	if checkErr != nil {
		t.Fatalf("waiting for %s: %v", what, checkErr)
	}
	if err != nil {
		t.Fatalf("%s: not within %s (%v); last state: %s", what, stepTimeout, err, state)
	}
}
