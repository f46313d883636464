package offlinekube

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// testWebhookThroughPodNetwork: a validating webhook named by a Service (as Kueue's are) is
// answered by the program registered for the Service's ready endpoint (a pod IP and container
// port), through the API server's egress and the pod network; once the program is gone, the API
// server's call is refused and, failurePolicy Fail, so is the object.
func testWebhookThroughPodNetwork(t *testing.T, c *Cluster) {
	ctx, client := t.Context(), c.Client()
	const ns, podIP, containerPort, refusal = "hooked", "10.244.200.9", 8443, "refused by the pod's program"
	certPEM, cert := servingCert(t, "hook."+ns+".svc")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Message: refusal + ": " + review.Request.Name}}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()

	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hook"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(containerPort)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready, portName, port := true, "https", int32(containerPort)
	if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "hook-pod", Labels: map[string]string{discoveryv1.LabelServiceName: "hook"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{podIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fail, none, path := admissionregv1.Fail, admissionregv1.SideEffectClassNone, "/validate"
	hooks := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := hooks.Create(ctx, &admissionregv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "podnet-test"},
		Webhooks: []admissionregv1.ValidatingWebhook{{
			Name:                    "deny.podnet.test",
			ClientConfig:            admissionregv1.WebhookClientConfig{Service: &admissionregv1.ServiceReference{Namespace: ns, Name: "hook", Path: &path}, CABundle: certPEM},
			Rules:                   []admissionregv1.RuleWithOperations{{Operations: []admissionregv1.OperationType{admissionregv1.Create}, Rule: admissionregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hooks.Delete(context.Background(), "podnet-test", metav1.DeleteOptions{}) }()
	t.Logf("Service %s/hook has ClusterIP %s; its endpoint %s:%d is served at %s", ns, svc.Spec.ClusterIP, podIP, containerPort, srv.Listener.Addr())

	remove := c.ServePodPort(podIP, containerPort, srv.Listener.Addr().String())
	createCM := func(ctx context.Context, name string) error {
		_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	}
	// The API server reads webhook configurations from an informer: the first creates may go in
	// before it has this one, so ask until one is judged.
	var last error
	i := 0
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, stepTimeout, true, func(ctx context.Context) (bool, error) {
		i++
		last = createCM(ctx, "cm-"+strings.Repeat("x", i%50+1))
		return last != nil && strings.Contains(last.Error(), refusal), nil
	})
	if err != nil {
		t.Fatalf("the webhook's program never answered through the pod network; last create: %v", last)
	}
	t.Logf("answered by the pod's program: %v", last)

	remove()
	err = createCM(ctx, "after-the-pod")
	if err == nil || strings.Contains(err.Error(), refusal) || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("with no program behind the endpoint, creating a ConfigMap gave %v; want the webhook call refused (failurePolicy Fail)", err)
	}
	t.Logf("refused without the pod's program: %v", err)
}

// servingCert is a self-signed serving certificate for dnsName (its own CA: the caBundle).
func servingCert(t *testing.T, dnsName string) ([]byte, tls.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, cert
}
