package clusterca

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// CommonName is the subject kubeadm gives the cluster CA; kubeadm checks nothing about it, but
// tools and people reading a cluster's ca.crt expect it.
const CommonName = "kubernetes"

// Validity bounds. The default is kubeadm's own caCertificateValidityPeriod. The minimum is one
// year because kubeadm signs the API server, kubelet client and etcd certificates for a year from
// this CA, and a certificate stops verifying when the CA that signed it expires.
const (
	DefaultValidity = 10 * 365 * 24 * time.Hour
	MinValidity     = 365 * 24 * time.Hour
	MaxValidity     = 100 * 365 * 24 * time.Hour
)

// backdate is how far before now the certificate becomes valid, as kubeadm backdates its own,
// so a node whose clock runs a few minutes behind still accepts it.
const backdate = 5 * time.Minute

// ParseValidity reads a validity period written as a Go duration in hours ("87600h"), as kubeadm's
// caCertificateValidityPeriod is, and checks it against MinValidity and MaxValidity.
func ParseValidity(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write hours, such as \"87600h\" for ten years", s)
	}
	if d < MinValidity || d > MaxValidity {
		return 0, fmt.Errorf("%q is outside %s-%s: kubeadm signs one-year certificates from this CA, so give at least %s (one year) and at most %s (a hundred years)",
			s, hours(MinValidity), hours(MaxValidity), hours(MinValidity), hours(MaxValidity))
	}
	return d, nil
}

func hours(d time.Duration) string { return fmt.Sprintf("%dh", int64(d/time.Hour)) }

// SelfSign makes the CA certificate for key, valid from now (less the backdate) for validity, and
// returns it PEM encoded. The serial number is random: two CAs made from the same seed at
// different times are different certificates of the same key.
func SelfSign(key crypto.Signer, validity time.Duration, now time.Time) (string, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial.Add(serial, big.NewInt(1)),
		Subject:               pkix.Name{CommonName: CommonName},
		NotBefore:             now.Add(-backdate).UTC(),
		NotAfter:              now.Add(validity).UTC(),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return "", fmt.Errorf("signing the CA certificate: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// ParseCertPEM reads one PEM certificate.
func ParseCertPEM(s string) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return x509.ParseCertificate(block.Bytes)
}

// PublicKeyHash is the value of kubeadm's --discovery-token-ca-cert-hash for a CA with this
// public key: "sha256:" and the hex SHA-256 of the DER SubjectPublicKeyInfo. It depends on the
// key only, so a seed's hash is known before its certificate exists.
func PublicKeyHash(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	return spkiHash(der), nil
}

// CertHash is PublicKeyHash of a certificate's key, from the bytes the certificate carries.
func CertHash(cert *x509.Certificate) string { return spkiHash(cert.RawSubjectPublicKeyInfo) }

func spkiHash(spki []byte) string {
	sum := sha256.Sum256(spki)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// KeyMatches reports whether cert is a certificate of key's public half.
func KeyMatches(cert *x509.Certificate, key crypto.Signer) bool {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	return err == nil && bytes.Equal(der, cert.RawSubjectPublicKeyInfo)
}
