package offlinekube

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the cluster's key material, generated afresh for every cluster: nothing is shared between
// test runs and nothing needs to be kept secret beyond the work directory (mode 0700).
type pki struct {
	dir string

	caCert *x509.Certificate
	caKey  crypto.Signer

	// Paths of the PEM files the components read, and the PEM the kubeconfigs embed.
	caCertFile, caKeyFile           string
	servingCertFile, servingKeyFile string
	serviceAccountKeyFile           string
	// The pod network's (podnet.go) serving certificate, and the client certificate the API
	// server presents to it: its egress over TCP must be TLS (see egressSelectorConfig).
	podNetworkCertFile, podNetworkKeyFile     string
	egressClientCertFile, egressClientKeyFile string
	serviceAccountPublicKeyFile               string
	clientCertPEMs, clientKeyPEMs             map[string][]byte
	caCertPEM                                 []byte
}

// identity is a client certificate's subject: the API server takes the common name as the user
// and the organisations as the groups.
type identity struct {
	user   string
	groups []string
}

// identities are the clients of the API server. The controller manager and the scheduler use the
// users the bootstrap RBAC policy grants their permissions to; the admin and kwok (which patches
// every Node's and Pod's status, as all the kubelets would) are in system:masters.
var identities = map[string]identity{
	"admin":                   {user: "testcluster-admin", groups: []string{"system:masters"}},
	"kube-controller-manager": {user: "system:kube-controller-manager"},
	"kube-scheduler":          {user: "system:kube-scheduler"},
	"kwok":                    {user: "kwok", groups: []string{"system:masters"}},
}

// serviceIP is the first address of serviceCIDR: the in-cluster address of the API server, which
// its serving certificate names like kubeadm's does.
var serviceIP = net.IPv4(10, 96, 0, 1)

// newPKI writes the cluster's key material into dir. caCertPEM and caKeyPEM, when given, are the
// CA; otherwise a new ECDSA P-256 CA is generated.
func newPKI(dir string, caCertPEM, caKeyPEM []byte) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		dir:            dir,
		clientCertPEMs: map[string][]byte{},
		clientKeyPEMs:  map[string][]byte{},
	}
	now := time.Now()

	var err error
	if len(caCertPEM) > 0 || len(caKeyPEM) > 0 {
		if p.caCert, p.caKey, err = parseCA(caCertPEM, caKeyPEM); err != nil {
			return nil, err
		}
		p.caCertPEM = caCertPEM
	} else {
		if p.caCert, p.caKey, err = newCA(now); err != nil {
			return nil, err
		}
		p.caCertPEM = pemBlock("CERTIFICATE", p.caCert.Raw)
		if caKeyPEM, err = keyPEM(p.caKey); err != nil {
			return nil, err
		}
	}
	if p.caCertFile, err = p.write("ca.crt", p.caCertPEM); err != nil {
		return nil, err
	}
	if p.caKeyFile, err = p.write("ca.key", caKeyPEM); err != nil {
		return nil, err
	}

	serving := leafTemplate(now, pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth)
	serving.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), serviceIP}
	serving.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if p.servingCertFile, p.servingKeyFile, _, _, err = p.issue("apiserver", serving); err != nil {
		return nil, fmt.Errorf("API server certificate: %w", err)
	}
	podNetwork := leafTemplate(now, pkix.Name{CommonName: "offlinekube-pod-network"}, x509.ExtKeyUsageServerAuth)
	podNetwork.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	if p.podNetworkCertFile, p.podNetworkKeyFile, _, _, err = p.issue("pod-network", podNetwork); err != nil {
		return nil, fmt.Errorf("pod network certificate: %w", err)
	}
	egressClient := leafTemplate(now, pkix.Name{CommonName: "kube-apiserver-egress"}, x509.ExtKeyUsageClientAuth)
	if p.egressClientCertFile, p.egressClientKeyFile, _, _, err = p.issue("egress-client", egressClient); err != nil {
		return nil, fmt.Errorf("API server egress client certificate: %w", err)
	}
	for name, id := range identities {
		client := leafTemplate(now, pkix.Name{CommonName: id.user, Organization: id.groups}, x509.ExtKeyUsageClientAuth)
		_, _, certPEM, keyPEMBytes, err := p.issue(name, client)
		if err != nil {
			return nil, fmt.Errorf("%s client certificate: %w", name, err)
		}
		p.clientCertPEMs[name], p.clientKeyPEMs[name] = certPEM, keyPEMBytes
	}

	// The service-account key signs the tokens the API server issues (TokenRequest) and the
	// controller manager's token controller; the API server verifies them with its public half.
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saKeyPEM, err := keyPEM(saKey)
	if err != nil {
		return nil, err
	}
	if p.serviceAccountKeyFile, err = p.write("sa.key", saKeyPEM); err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	if p.serviceAccountPublicKeyFile, err = p.write("sa.pub", pemBlock("PUBLIC KEY", saPubDER)); err != nil {
		return nil, err
	}
	return p, nil
}

// leafTemplate is a certificate the CA signs for a year from an hour ago, for one use (serving
// or client authentication); the caller adds the names a serving certificate answers to.
func leafTemplate(now time.Time, subject pkix.Name, use x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		Subject:     subject,
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{use},
	}
}

// issue signs template with the CA for a new key and writes <name>.crt and <name>.key.
func (p *pki) issue(name string, template *x509.Certificate) (certFile, keyFile string, certPEM, keyPEMBytes []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, nil, err
	}
	der, err := sign(template, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return "", "", nil, nil, err
	}
	certPEM = pemBlock("CERTIFICATE", der)
	if keyPEMBytes, err = keyPEM(key); err != nil {
		return "", "", nil, nil, err
	}
	if certFile, err = p.write(name+".crt", certPEM); err != nil {
		return "", "", nil, nil, err
	}
	if keyFile, err = p.write(name+".key", keyPEMBytes); err != nil {
		return "", "", nil, nil, err
	}
	return certFile, keyFile, certPEM, keyPEMBytes, nil
}

func (p *pki) write(name string, data []byte) (string, error) {
	path := filepath.Join(p.dir, name)
	return path, os.WriteFile(path, data, 0o600)
}

func sign(template, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, template, parent, pub, signer)
}

// newCA is a self-signed ECDSA P-256 CA valid for ten years.
func newCA(now time.Time) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "testcluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := sign(template, template, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// parseCA reads a CA given in PEM: the certificate must be a CA's and the key (PKCS#8, PKCS#1 RSA
// or SEC 1 EC, the forms kubeadm and OpenSSL write) its private half.
func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	certBlock, _ := pem.Decode(certPEM)
	if certBlock == nil || certBlock.Type != "CERTIFICATE" {
		return nil, nil, errors.New("offlinekube: Options.CACertPEM holds no PEM CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("offlinekube: Options.CACertPEM: %w", err)
	}
	if !cert.IsCA {
		return nil, nil, fmt.Errorf("offlinekube: Options.CACertPEM (%s) is not a CA certificate", cert.Subject)
	}
	keyBlock, _ := pem.Decode(keyPEM)
	if keyBlock == nil {
		return nil, nil, errors.New("offlinekube: Options.CAKeyPEM holds no PEM block")
	}
	var parsed any
	switch keyBlock.Type {
	case "PRIVATE KEY":
		parsed, err = x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	case "RSA PRIVATE KEY":
		parsed, err = x509.ParsePKCS1PrivateKey(keyBlock.Bytes)
	case "EC PRIVATE KEY":
		parsed, err = x509.ParseECPrivateKey(keyBlock.Bytes)
	default:
		return nil, nil, fmt.Errorf("offlinekube: Options.CAKeyPEM: a %q block; want PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY", keyBlock.Type)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("offlinekube: Options.CAKeyPEM: %w", err)
	}
	key, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("offlinekube: Options.CAKeyPEM: a %T cannot sign", parsed)
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if pub, ok := key.Public().(equaler); !ok || !pub.Equal(cert.PublicKey) {
		return nil, nil, errors.New("offlinekube: Options.CAKeyPEM is not the key of Options.CACertPEM")
	}
	return cert, key, nil
}

// keyPEM encodes a private key as PKCS#8, which every component reads.
func keyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pemBlock("PRIVATE KEY", der), nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
