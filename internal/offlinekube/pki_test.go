package offlinekube

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"strings"
	"testing"
)

// A CA handed in signs the API server's serving certificate (for 127.0.0.1 and the in-cluster
// names) and the components' client certificates.
func TestPKIUsesTheGivenCA(t *testing.T) {
	caCert, caKey := rsaCA(t)
	p, err := newPKI(t.TempDir(), caCert, caKey)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caCert)
	serving := readCert(t, p.servingCertFile)
	for _, name := range []string{"127.0.0.1", "kubernetes.default.svc", "10.96.0.1"} {
		if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	admin := parseCert(t, p.clientCertPEMs["admin"])
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin client certificate: %v", err)
	}
	if got := admin.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin certificate groups %v, want [system:masters]", got)
	}
}

func TestPKIRefusesABadCA(t *testing.T) {
	caCert, caKey := rsaCA(t)
	_, otherKey := rsaCA(t)
	leaf, err := newPKI(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	servingPEM, err := os.ReadFile(leaf.servingCertFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		cert, key   []byte
		wantMessage string
	}{
		{"key of another CA", caCert, otherKey, "is not the key of Options.CACertPEM"},
		{"not a CA", servingPEM, caKey, "is not a CA certificate"},
		{"no certificate", []byte("garbage"), caKey, "no PEM CERTIFICATE block"},
		{"no key", caCert, nil, "Options.CAKeyPEM holds no PEM block"},
		{"public key for a key", caCert, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1}}), `a "PUBLIC KEY" block`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newPKI(t.TempDir(), tc.cert, tc.key)
			if err == nil || !strings.Contains(err.Error(), tc.wantMessage) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantMessage)
			}
		})
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseCert(t, data)
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("no PEM block in %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
