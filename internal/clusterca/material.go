package clusterca

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
)

// Material is what a cluster CA is made of besides its certificate: the CA key and the two
// secrets kubeadm needs to bring nodes in.
type Material struct {
	// Key is the CA private key (*ecdsa.PrivateKey or *rsa.PrivateKey).
	Key crypto.Signer
	// CertificateKey is the hex AES-256 key `kubeadm init --upload-certs --certificate-key`
	// encrypts the control-plane certificates with, and `kubeadm join --control-plane` decrypts
	// them with: 32 bytes, 64 hex digits.
	CertificateKey string
	// JoinToken is a kubeadm bootstrap token, "[a-z0-9]{6}.[a-z0-9]{16}".
	JoinToken string
}

// TokenPattern is the form of a kubeadm bootstrap token: a public id and a secret, joined by a dot.
var TokenPattern = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)

// certificateKeyBytes is the size of kubeadm's certificate key (AES-256).
const certificateKeyBytes = 32

// MinSeedLength is the shortest seed Derive accepts. Everything secret follows from the seed, so it
// must carry at least the strength of the key it makes: 32 characters of `openssl rand -hex 32`
// output are 128 bits, as much as ECDSA P-256 offers.
const MinSeedLength = 32

// Generate makes fresh material from crypto/rand.
func Generate(alg Algorithm) (Material, error) {
	return build(alg, nil, rand.Reader, rand.Reader)
}

// Derive makes the material from seed alone: the same seed and algorithm always give the same
// key, certificate key and token, and different algorithms give unrelated keys. Each part comes
// from its own stream, keyed by HKDF-SHA256 of the seed with a label naming the part, so knowing
// one part (the token a node was given) tells nothing about another (the CA key).
func Derive(seed string, alg Algorithm) (Material, error) {
	if len(seed) < MinSeedLength {
		return Material{}, fmt.Errorf("the seed is %d characters; it must be at least %d (generate one with `openssl rand -hex 32`)", len(seed), MinSeedLength)
	}
	keyStream, err := seedStream(seed, "ca key "+string(alg))
	if err != nil {
		return Material{}, err
	}
	certKeyStream, err := seedStream(seed, "certificate key")
	if err != nil {
		return Material{}, err
	}
	tokenStream, err := seedStream(seed, "bootstrap token")
	if err != nil {
		return Material{}, err
	}
	return build(alg, keyStream, certKeyStream, tokenStream)
}

func build(alg Algorithm, keySource, certKeySource, tokenSource io.Reader) (Material, error) {
	key, err := newKey(alg, keySource)
	if err != nil {
		return Material{}, err
	}
	certKey := make([]byte, certificateKeyBytes)
	if _, err := io.ReadFull(certKeySource, certKey); err != nil {
		return Material{}, fmt.Errorf("making the certificate key: %w", err)
	}
	token, err := newToken(tokenSource)
	if err != nil {
		return Material{}, err
	}
	return Material{Key: key, CertificateKey: hex.EncodeToString(certKey), JoinToken: token}, nil
}

// seedStream is an endless deterministic byte stream for one label: AES-256-CTR keyed by
// HKDF-SHA256(seed, label). HKDF alone stops at 8160 bytes, fewer than an RSA prime search reads.
func seedStream(seed, label string) (io.Reader, error) {
	key, err := hkdf.Key(sha256.New, []byte(seed), []byte("gpucluster cluster CA v1"), label, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.StreamReader{S: cipher.NewCTR(block, make([]byte, aes.BlockSize)), R: zeros{}}, nil
}

// zeros reads as an endless run of zero bytes, so a CTR stream over it yields the key stream.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// newKey makes a key of alg from the bytes of source, or from the system's randomness through
// the standard library when source is nil. The standard library's GenerateKey functions ignore
// their reader, so a key that must follow from a seed is built here from the raw numbers.
func newKey(alg Algorithm, source io.Reader) (crypto.Signer, error) {
	if c := alg.curve(); c != nil {
		if source == nil {
			return ecdsa.GenerateKey(c, rand.Reader)
		}
		return ecdsaKey(c.Params().BitSize, alg, source)
	}
	if bits := alg.rsaBits(); bits > 0 {
		if source == nil {
			return rsa.GenerateKey(rand.Reader, bits)
		}
		return rsaKey(bits, source)
	}
	_, err := ParseAlgorithm(string(alg))
	return nil, err
}

// ecdsaKey draws scalars until one lies in [1, n-1]; for P-256 and P-384 a draw misses with
// probability below 2^-32, and rejecting instead of reducing keeps the key uniform.
func ecdsaKey(bitSize int, alg Algorithm, source io.Reader) (*ecdsa.PrivateKey, error) {
	raw := make([]byte, (bitSize+7)/8)
	for range 64 {
		if _, err := io.ReadFull(source, raw); err != nil {
			return nil, fmt.Errorf("making the %s key: %w", alg, err)
		}
		if k, err := ecdsa.ParseRawPrivateKey(alg.curve(), raw); err == nil {
			return k, nil
		}
	}
	return nil, fmt.Errorf("making the %s key: the source gave no valid scalar in 64 draws", alg)
}

// rsaPublicExponent is the exponent every RSA key here uses, as everywhere else.
const rsaPublicExponent = 65537

// rsaKey builds an RSA key of exactly bits bits from two primes drawn from source.
func rsaKey(bits int, source io.Reader) (*rsa.PrivateKey, error) {
	e := big.NewInt(rsaPublicExponent)
	one := big.NewInt(1)
	for range 16 {
		p, err := rsaPrime(bits/2, e, source)
		if err != nil {
			return nil, err
		}
		q, err := rsaPrime(bits/2, e, source)
		if err != nil {
			return nil, err
		}
		if p.Cmp(q) == 0 {
			continue
		}
		n := new(big.Int).Mul(p, q)
		if n.BitLen() != bits {
			continue
		}
		pm1, qm1 := new(big.Int).Sub(p, one), new(big.Int).Sub(q, one)
		gcd := new(big.Int).GCD(nil, nil, pm1, qm1)
		lambda := new(big.Int).Div(new(big.Int).Mul(pm1, qm1), gcd)
		d := new(big.Int).ModInverse(e, lambda)
		if d == nil {
			continue
		}
		key := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: rsaPublicExponent}, D: d, Primes: []*big.Int{p, q}}
		if err := key.Validate(); err != nil {
			return nil, fmt.Errorf("making the RSA-%d key: %w", bits, err)
		}
		key.Precompute()
		return key, nil
	}
	return nil, fmt.Errorf("making the RSA-%d key: no usable prime pair in 16 tries", bits)
}

// rsaPrime finds a bits-bit prime p with p-1 coprime to e. It draws a start with the top two
// bits set (so the product of two such primes has exactly 2*bits bits) and walks the odd numbers
// from there, skipping every one a small prime divides before paying for a probable-prime test:
// a sieve over the first sievePrimes primes turns away about nine candidates in ten, which makes
// a seed's RSA-4096 key several times faster to derive than testing each random draw.
func rsaPrime(bits int, e *big.Int, source io.Reader) (*big.Int, error) {
	buf := make([]byte, (bits+7)/8)
	one := big.NewInt(1)
	residues := make([]uint64, len(sievePrimes))
	for range 1000 {
		if _, err := io.ReadFull(source, buf); err != nil {
			return nil, fmt.Errorf("making an RSA prime: %w", err)
		}
		// bits is a multiple of 8 for every algorithm here.
		buf[0] |= 0xc0
		buf[len(buf)-1] |= 1
		start := new(big.Int).SetBytes(buf)
		for i, sp := range sievePrimes {
			residues[i] = new(big.Int).Mod(start, new(big.Int).SetUint64(sp)).Uint64()
		}
	walk:
		for delta := uint64(0); delta < sieveWalk; delta += 2 {
			for i, sp := range sievePrimes {
				if (residues[i]+delta)%sp == 0 {
					continue walk
				}
			}
			p := new(big.Int).Add(start, new(big.Int).SetUint64(delta))
			if p.BitLen() != bits {
				break
			}
			if !p.ProbablyPrime(20) {
				continue
			}
			if new(big.Int).GCD(nil, nil, new(big.Int).Sub(p, one), e).Cmp(one) != 0 {
				continue
			}
			return p, nil
		}
	}
	return nil, errors.New("making an RSA prime: none found in 1000 walks")
}

// sieveWalk is how far rsaPrime walks from one start before drawing another: prime gaps near
// 2^2048 average about 1400, so a walk this long almost always ends on a prime.
const sieveWalk = 1 << 16

// sievePrimes are the odd primes below 2^13, the small factors rsaPrime rules out cheaply.
var sievePrimes = func() []uint64 {
	const limit = 1 << 13
	composite := make([]bool, limit)
	var out []uint64
	for n := 3; n < limit; n += 2 {
		if composite[n] {
			continue
		}
		out = append(out, uint64(n))
		for m := n * n; m < limit; m += 2 * n {
			composite[m] = true
		}
	}
	return out
}()

// tokenAlphabet is the alphabet of kubeadm bootstrap tokens.
const tokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newToken draws 22 characters of tokenAlphabet, rejecting bytes at or above the largest
// multiple of 36 below 256 so every character is equally likely.
func newToken(source io.Reader) (string, error) {
	const limit = 256 - 256%len(tokenAlphabet)
	out := make([]byte, 0, 22)
	var b [1]byte
	for len(out) < cap(out) {
		if _, err := io.ReadFull(source, b[:]); err != nil {
			return "", fmt.Errorf("making the bootstrap token: %w", err)
		}
		if int(b[0]) < limit {
			out = append(out, tokenAlphabet[int(b[0])%len(tokenAlphabet)])
		}
	}
	return string(out[:6]) + "." + string(out[6:]), nil
}

// KeyPEM encodes the CA key as kubeadm writes ca.key: "EC PRIVATE KEY" (SEC 1) for ECDSA and
// "RSA PRIVATE KEY" (PKCS #1) for RSA.
func (m Material) KeyPEM() (string, error) {
	switch k := m.Key.(type) {
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return "", err
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})), nil
	case *rsa.PrivateKey:
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})), nil
	}
	return "", fmt.Errorf("cannot encode a %T", m.Key)
}

// ParseKeyPEM reads a key KeyPEM wrote (or a PKCS #8 one).
func ParseKeyPEM(s string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("no PEM block in the private key")
	}
	switch block.Type {
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, fmt.Errorf("a %T cannot sign", k)
	}
	return nil, fmt.Errorf("a PEM block of type %q is not a private key", block.Type)
}
