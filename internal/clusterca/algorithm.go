package clusterca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"strings"
)

// Algorithm is a key algorithm, spelled as kubeadm v1beta4's ClusterConfiguration
// encryptionAlgorithm spells it, so the CA and the certificates kubeadm signs with it agree.
type Algorithm string

// The values kubeadm v1beta4 accepts for encryptionAlgorithm.
const (
	ECDSAP256 Algorithm = "ECDSA-P256"
	ECDSAP384 Algorithm = "ECDSA-P384"
	RSA2048   Algorithm = "RSA-2048"
	RSA3072   Algorithm = "RSA-3072"
	RSA4096   Algorithm = "RSA-4096"
)

// DefaultAlgorithm is ECDSA P-256: small keys, fast handshakes, and accepted by every kubeadm
// that knows v1beta4 (whose own default, RSA-2048, is kept for compatibility, not strength).
const DefaultAlgorithm = ECDSAP256

// Algorithms lists every accepted algorithm, the default first.
func Algorithms() []Algorithm {
	return []Algorithm{ECDSAP256, ECDSAP384, RSA2048, RSA3072, RSA4096}
}

// AlgorithmNames is Algorithms as strings, for schema validators and messages.
func AlgorithmNames() []string {
	var out []string
	for _, a := range Algorithms() {
		out = append(out, string(a))
	}
	return out
}

// ParseAlgorithm checks name against the accepted algorithms.
func ParseAlgorithm(name string) (Algorithm, error) {
	for _, a := range Algorithms() {
		if string(a) == name {
			return a, nil
		}
	}
	return "", fmt.Errorf("%q is not a key algorithm kubeadm v1beta4 accepts; use one of %s", name, strings.Join(AlgorithmNames(), ", "))
}

// curve is the elliptic curve of an ECDSA algorithm, nil for RSA.
func (a Algorithm) curve() elliptic.Curve {
	switch a {
	case ECDSAP256:
		return elliptic.P256()
	case ECDSAP384:
		return elliptic.P384()
	}
	return nil
}

// rsaBits is the modulus size of an RSA algorithm, 0 for ECDSA.
func (a Algorithm) rsaBits() int {
	switch a {
	case RSA2048:
		return 2048
	case RSA3072:
		return 3072
	case RSA4096:
		return 4096
	}
	return 0
}

// AlgorithmOf names the algorithm of a key this package can make, or returns an error.
func AlgorithmOf(pub crypto.PublicKey) (Algorithm, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		for _, a := range Algorithms() {
			if c := a.curve(); c != nil && c == k.Curve {
				return a, nil
			}
		}
	case *rsa.PublicKey:
		for _, a := range Algorithms() {
			if a.rsaBits() == k.N.BitLen() {
				return a, nil
			}
		}
	}
	return "", fmt.Errorf("a %T is not a key of %s", pub, strings.Join(AlgorithmNames(), ", "))
}
