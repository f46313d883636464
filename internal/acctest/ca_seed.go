package acctest

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
)

// SeededCA is what a CA seed derives (clusterca.Derive): the secrets that, with the seed given to
// write-only arguments and the ephemeral resource, may be in no plan and no state.
type SeededCA struct {
	Seed           string
	KeyPEM         string
	CertificateKey string
	JoinToken      string
}

// NewSeededCA makes a fresh random seed (64 hex digits) and derives its CA's secrets.
func NewSeededCA(t *testing.T) SeededCA {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return DeriveSeededCA(t, hex.EncodeToString(b))
}

// DeriveSeededCA derives the secrets of the CA of seed, with the provider's default key algorithm.
func DeriveSeededCA(t *testing.T, seed string) SeededCA {
	t.Helper()
	m, err := clusterca.Derive(seed, clusterca.DefaultAlgorithm)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := m.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	return SeededCA{Seed: seed, KeyPEM: keyPEM, CertificateKey: m.CertificateKey, JoinToken: m.JoinToken}
}
