// Package intercept lets programs that call Alibaba Cloud at its fixed HTTPS host names reach the
// emulator unchanged, as their HTTPS proxy. Some cannot be given an endpoint: the Kubernetes
// Cluster Autoscaler's alicloud provider finds Auto Scaling only through the Location service at
// https://location.aliyuncs.com, hard-coded in its copy of the Go SDK
// (https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.36.1/cluster-autoscaler/cloudprovider/alicloud/alibaba-cloud-sdk-go/sdk/endpoints/location_resolver.go),
// whose table has no Auto Scaling endpoint to fall back to. Go programs, like most HTTP clients,
// send HTTPS through the proxy named by HTTPS_PROXY with a CONNECT request
// (https://pkg.go.dev/net/http#ProxyFromEnvironment); the Interceptor answers a CONNECT to an
// *.aliyuncs.com host on port 443 itself: it completes TLS as that host with a certificate its own
// CA signed, and serves the emulator on the connection. The client trusts that CA through
// SSL_CERT_FILE (https://pkg.go.dev/crypto/x509#SystemCertPool). Plain HTTP requests in proxy form
// (HTTP_PROXY) need nothing of this: the emulator serves them as they come.
//
// It is a test double's plumbing, not a proxy: a CONNECT to any other host is refused, and nothing
// leaves the machine.
package intercept

import (
	"bufio"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Domain is the only DNS suffix a CONNECT may name: Alibaba Cloud's API hosts.
const Domain = ".aliyuncs.com"

// certLife is how long the CA and the host certificates are valid: a run of the emulator, with a
// margin for clocks that differ.
const certLife = 7 * 24 * time.Hour

// Interceptor answers CONNECT requests to Alibaba Cloud hosts by serving next over TLS, and passes
// every other request to next.
type Interceptor struct {
	next   http.Handler
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte

	mu    sync.Mutex
	certs map[string]*tls.Certificate // by host name
}

// New makes an Interceptor in front of next with a CA of its own, new each time.
func New(next http.Handler) (*Interceptor, error) {
	der, key, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "gpucluster-emulator interception CA"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}, nil, nil)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Interceptor{next: next, caCert: ca, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		certs: map[string]*tls.Certificate{}}, nil
}

// CAPEM is the CA certificate (PEM) a client must trust, through SSL_CERT_FILE for Go programs.
func (i *Interceptor) CAPEM() []byte { return i.caPEM }

// ServeHTTP intercepts CONNECT and hands everything else to next.
func (i *Interceptor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		i.next.ServeHTTP(w, r)
		return
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil || port != "443" || !strings.HasSuffix(host, Domain) {
		http.Error(w, "the emulator intercepts CONNECT to *"+Domain+":443 only, not "+r.Host, http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "connection cannot be taken over", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = conn.Close()
		return
	}
	tlsConn := tls.Server(&bufferedConn{Conn: conn, r: buf.Reader}, &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return i.certFor(host) },
	})
	go i.serveConn(tlsConn)
}

// serveConn serves next on one intercepted connection until the client closes it.
func (i *Interceptor) serveConn(c net.Conn) {
	l := &oneConnListener{conn: c, done: make(chan struct{})}
	srv := &http.Server{Handler: i.next, ReadHeaderTimeout: 30 * time.Second, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed || s == http.StateHijacked {
			l.close()
		}
	}}
	_ = srv.Serve(l)
}

// certFor answers (and keeps) host's certificate, signed by the CA.
func (i *Interceptor) certFor(host string) (*tls.Certificate, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if c := i.certs[host]; c != nil {
		return c, nil
	}
	der, key, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: host},
		DNSNames:    []string{host},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, i.caCert, i.caKey)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	i.certs[host] = c
	return c, nil
}

// issue makes a new key and a certificate of tmpl for it, valid for certLife, signed by parent
// with parentKey, or self-signed when parent is nil.
func issue(tmpl, parent *x509.Certificate, parentKey crypto.Signer) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(certLife)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	return der, key, err
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

// bufferedConn reads first what the CONNECT request's reader already buffered (a client may send
// its TLS hello without waiting for the 200).
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// oneConnListener hands http.Server one connection, then blocks until it is closed.
type oneConnListener struct {
	mu   sync.Mutex
	conn net.Conn
	done chan struct{}
	once sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.conn
	l.conn = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, errors.New("intercepted connection closed")
}

func (l *oneConnListener) close() { l.once.Do(func() { close(l.done) }) }

func (l *oneConnListener) Close() error { l.close(); return nil }

func (l *oneConnListener) Addr() net.Addr { return dummyAddr{} }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "intercept" }
func (dummyAddr) String() string  { return "intercept" }
