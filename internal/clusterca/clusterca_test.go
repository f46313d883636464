package clusterca

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/testtools"
)

const testSeed = "0123456789abcdef0123456789abcdef-test-seed"

// makeCA builds a CA of alg, from seed when it is not empty, and checks everything a CA must be
// before returning the certificate, its PEM and the material.
func makeCA(t *testing.T, alg Algorithm, seed string) (*x509.Certificate, string, Material) {
	t.Helper()
	var m Material
	var err error
	if seed == "" {
		m, err = Generate(alg)
	} else {
		m, err = Derive(seed, alg)
	}
	if err != nil {
		t.Fatalf("%s: %v", alg, err)
	}
	now := time.Now()
	certPEM, err := SelfSign(m.Key, DefaultValidity, now)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ParseCertPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(cert); err != nil {
		t.Errorf("%s: the certificate does not verify with its own key: %v", alg, err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Errorf("%s: the certificate does not verify as a root: %v", alg, err)
	}
	if !cert.IsCA || !cert.BasicConstraintsValid {
		t.Errorf("%s: IsCA=%v BasicConstraintsValid=%v, want both", alg, cert.IsCA, cert.BasicConstraintsValid)
	}
	wantUsage := x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	if cert.KeyUsage != wantUsage {
		t.Errorf("%s: key usage %b, want %b", alg, cert.KeyUsage, wantUsage)
	}
	if cert.Subject.CommonName != "kubernetes" {
		t.Errorf("%s: subject %q, want CN kubernetes", alg, cert.Subject)
	}
	if got := cert.NotAfter.Sub(cert.NotBefore); got != DefaultValidity+backdate {
		t.Errorf("%s: valid for %s, want %s", alg, got, DefaultValidity+backdate)
	}
	if !cert.NotBefore.Before(now) {
		t.Errorf("%s: NotBefore %s is not before now %s", alg, cert.NotBefore, now)
	}
	if got, err := AlgorithmOf(cert.PublicKey); err != nil || got != alg {
		t.Errorf("%s: the certificate's key is %s (%v)", alg, got, err)
	}
	if !KeyMatches(cert, m.Key) {
		t.Errorf("%s: KeyMatches is false for the key the certificate was made for", alg)
	}
	keyPEM, err := m.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseKeyPEM(keyPEM)
	if err != nil || !KeyMatches(cert, back) {
		t.Errorf("%s: the private key PEM does not read back as the certificate's key: %v", alg, err)
	}
	if !TokenPattern.MatchString(m.JoinToken) {
		t.Errorf("%s: join token %q is not [a-z0-9]{6}.[a-z0-9]{16}", alg, m.JoinToken)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(m.CertificateKey) {
		t.Errorf("%s: certificate key %q is not 64 hex digits", alg, m.CertificateKey)
	}
	return cert, certPEM, m
}

func TestGenerateMakesAKubeadmCA(t *testing.T) {
	for _, alg := range Algorithms() {
		t.Run(string(alg), func(t *testing.T) {
			_, _, a := makeCA(t, alg, "")
			_, _, b := makeCA(t, alg, "")
			aPEM, _ := a.KeyPEM()
			bPEM, _ := b.KeyPEM()
			if a.JoinToken == b.JoinToken || a.CertificateKey == b.CertificateKey || aPEM == bPEM {
				t.Errorf("two generated CAs share a key, token or certificate key")
			}
		})
	}
}

// derivedTwice are the algorithms derived twice over; the larger RSA sizes take seconds per key
// (a prime search on the seed's stream), so TestDeriveLargeRSA makes each of them once.
var derivedTwice = []Algorithm{ECDSAP256, ECDSAP384, RSA2048}

func TestDeriveIsDeterministic(t *testing.T) {
	for _, alg := range derivedTwice {
		t.Run(string(alg), func(t *testing.T) {
			cert, _, a := makeCA(t, alg, testSeed)
			b, err := Derive(testSeed, alg)
			if err != nil {
				t.Fatal(err)
			}
			aPEM, _ := a.KeyPEM()
			bPEM, _ := b.KeyPEM()
			if aPEM != bPEM || a.JoinToken != b.JoinToken || a.CertificateKey != b.CertificateKey {
				t.Errorf("the same seed gave different material")
			}
			if !KeyMatches(cert, b.Key) {
				t.Errorf("a certificate made from the seed's first derivation does not match the second")
			}
			other, err := Derive(testSeed+"x", alg)
			if err != nil {
				t.Fatal(err)
			}
			oPEM, _ := other.KeyPEM()
			if oPEM == aPEM || other.JoinToken == a.JoinToken || other.CertificateKey == a.CertificateKey {
				t.Errorf("another seed gave some of the same material")
			}
		})
	}
}

func TestDeriveLargeRSA(t *testing.T) {
	for _, alg := range []Algorithm{RSA3072, RSA4096} {
		t.Run(string(alg), func(t *testing.T) { makeCA(t, alg, testSeed) })
	}
}

// BenchmarkDerive measures how long a seed takes to become each algorithm's material: the cost
// every plan and every open of the ephemeral resource pays. Each iteration takes another seed,
// since an RSA prime search is as long as that seed makes it.
func BenchmarkDerive(b *testing.B) {
	for _, alg := range Algorithms() {
		b.Run(string(alg), func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if _, err := Derive(fmt.Sprintf("%s-%d", testSeed, i), alg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestDeriveSeparatesAlgorithmsAndParts(t *testing.T) {
	p256, err := Derive(testSeed, ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := Derive(testSeed, ECDSAP384)
	if err != nil {
		t.Fatal(err)
	}
	// The token and certificate key do not depend on the algorithm; the key does.
	if p256.JoinToken != p384.JoinToken || p256.CertificateKey != p384.CertificateKey {
		t.Errorf("the token or certificate key changed with the algorithm")
	}
	raw := p256.Key.(interface{ Bytes() ([]byte, error) })
	kb, err := raw.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p256.CertificateKey, hex.EncodeToString(kb)[:16]) {
		t.Errorf("the certificate key shares bytes with the CA key: the parts are not separated")
	}
}

// TestDeriveKnownAnswer pins the derivation: users keep only the seed, so a change that made
// another key from the same seed would silently orphan every CA already in use. If this fails,
// the derivation changed; that needs a new version label in seedStream, not a new expected value.
func TestDeriveKnownAnswer(t *testing.T) {
	for alg, want := range map[Algorithm]string{
		ECDSAP256: "sha256:703abeaabb6b2a6ed4190d3293159e9976fa6dcd3a4ba559abfe53e525a25cb7",
		RSA2048:   "sha256:04683aa0e7dcbcd1a6421a18ef421372eb5e4f4b5cecb06cd6a82381a7fd9153",
	} {
		m, err := Derive(testSeed, alg)
		if err != nil {
			t.Fatal(err)
		}
		hash, err := PublicKeyHash(m.Key.Public())
		if err != nil {
			t.Fatal(err)
		}
		const wantToken = "wlq2tn.5c146niyt9gms9wh"
		if hash != want || m.JoinToken != wantToken {
			t.Errorf("seed %q with %s now derives hash %s and token %s; it derived %s and %s", testSeed, alg, hash, m.JoinToken, want, wantToken)
		}
	}
}

func TestDeriveRejectsShortSeeds(t *testing.T) {
	_, err := Derive(strings.Repeat("a", MinSeedLength-1), ECDSAP256)
	if err == nil || !strings.Contains(err.Error(), "openssl rand -hex 32") {
		t.Fatalf("a %d-character seed: err = %v, want a refusal saying how to make a seed", MinSeedLength-1, err)
	}
	if _, err := Derive(strings.Repeat("a", MinSeedLength), ECDSAP256); err != nil {
		t.Fatalf("a %d-character seed: %v", MinSeedLength, err)
	}
}

func TestParseAlgorithm(t *testing.T) {
	for _, name := range []string{"ECDSA-P256", "ECDSA-P384", "RSA-2048", "RSA-3072", "RSA-4096"} {
		if a, err := ParseAlgorithm(name); err != nil || string(a) != name {
			t.Errorf("ParseAlgorithm(%q) = %q, %v", name, a, err)
		}
	}
	for _, name := range []string{"", "ecdsa-p256", "RSA-1024", "ED25519"} {
		if _, err := ParseAlgorithm(name); err == nil || !strings.Contains(err.Error(), "ECDSA-P256, ECDSA-P384, RSA-2048") {
			t.Errorf("ParseAlgorithm(%q): err = %v, want a refusal listing the algorithms", name, err)
		}
	}
}

func TestParseValidity(t *testing.T) {
	for in, want := range map[string]time.Duration{"87600h": DefaultValidity, "8760h": MinValidity, "876000h": MaxValidity} {
		if got, err := ParseValidity(in); err != nil || got != want {
			t.Errorf("ParseValidity(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for in, why := range map[string]string{"10y": "is not a duration", "8759h": "at least 8760h", "876001h": "at most 876000h", "-1h": "outside"} {
		if _, err := ParseValidity(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseValidity(%q): err = %v, want it to say %q", in, err, why)
		}
	}
}

func TestKeyMatchesRejectsAnotherKey(t *testing.T) {
	cert, _, _ := makeCA(t, ECDSAP256, testSeed)
	other, err := Derive(testSeed+"-other", ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	if KeyMatches(cert, other.Key) {
		t.Fatal("KeyMatches is true for a key the certificate was not made for")
	}
}

// TestHashMatchesOpenSSL computes the discovery hash the way kubeadm's documentation does,
// `openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256sum`, and has openssl verify
// the certificate as a CA and read the private key.
func TestHashMatchesOpenSSL(t *testing.T) {
	openssl := testtools.Require(t, "openssl", "openssl")
	for _, alg := range []Algorithm{ECDSAP256, ECDSAP384, RSA2048} {
		t.Run(string(alg), func(t *testing.T) {
			cert, certPEM, m := makeCA(t, alg, testSeed)
			dir := t.TempDir()
			certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
			keyPEM, err := m.KeyPEM()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(certFile, []byte(certPEM), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(keyFile, []byte(keyPEM), 0o600); err != nil {
				t.Fatal(err)
			}
			run := func(stdin []byte, args ...string) []byte {
				t.Helper()
				cmd := exec.Command(openssl, args...)
				cmd.Stdin = bytes.NewReader(stdin)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				}
				return out
			}
			pubPEM := run(nil, "x509", "-in", certFile, "-pubkey", "-noout")
			der := run(pubPEM, "pkey", "-pubin", "-outform", "der")
			sum := sha256.Sum256(der)
			want := "sha256:" + hex.EncodeToString(sum[:])
			if got := CertHash(cert); got != want {
				t.Errorf("CertHash = %s, openssl gives %s", got, want)
			}
			if got, _ := PublicKeyHash(m.Key.Public()); got != want {
				t.Errorf("PublicKeyHash = %s, openssl gives %s", got, want)
			}
			if out := run(nil, "verify", "-CAfile", certFile, certFile); !bytes.Contains(out, []byte(": OK")) {
				t.Errorf("openssl verify: %s", out)
			}
			if text := run(nil, "x509", "-in", certFile, "-noout", "-text"); !bytes.Contains(text, []byte("CA:TRUE")) || !bytes.Contains(text, []byte("Certificate Sign")) {
				t.Errorf("openssl does not read a CA with Certificate Sign usage:\n%s", text)
			}
			// The private key openssl reads has the certificate's public key.
			keyPub := run(nil, "pkey", "-in", keyFile, "-pubout")
			if !bytes.Equal(keyPub, pubPEM) {
				t.Errorf("openssl reads another public key from the private key:\n%s\nthan from the certificate:\n%s", keyPub, pubPEM)
			}
		})
	}
}
