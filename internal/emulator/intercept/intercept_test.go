package intercept

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// startInterceptor serves an Interceptor in front of a handler that echoes the host and path it
// was asked for, and answers a client that sends everything through it as HTTP_PROXY and
// HTTPS_PROXY would and trusts only the interceptor's CA.
func startInterceptor(t *testing.T) (*httptest.Server, *http.Client) {
	t.Helper()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		_, _ = io.WriteString(w, scheme+" "+r.Host+" "+r.URL.RequestURI())
	})
	i, err := New(next)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(i)
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(i.CAPEM()) {
		t.Fatal("CAPEM is no PEM certificate")
	}
	proxy, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// An HTTPS request to an Alibaba Cloud host, sent through the interceptor as a proxy, reaches the
// handler over TLS with its host and path, the certificate verified against the interceptor's CA;
// several requests share the connection, and a second host gets its own certificate.
func TestConnectToAlibabaCloudHostIsServed(t *testing.T) {
	_, c := startInterceptor(t)
	for _, u := range []string{"https://location.aliyuncs.com/?Action=DescribeEndpoints", "https://location.aliyuncs.com/again",
		"https://ess.cn-wulanchabu.aliyuncs.com/?Action=DescribeScalingGroups"} {
		status, body, err := get(t, c, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		want := "https " + strings.TrimPrefix(u, "https://")
		want = strings.Replace(want, "/", " /", 1)
		if status != 200 || body != want {
			t.Fatalf("%s: %d %q, want 200 %q", u, status, body, want)
		}
	}
}

// Plain HTTP in proxy form goes straight to the handler.
func TestPlainProxyRequestPassesThrough(t *testing.T) {
	_, c := startInterceptor(t)
	status, body, err := get(t, c, "http://ess.cn-wulanchabu.aliyuncs.com/?Action=DescribeScalingGroups")
	if err != nil || status != 200 || body != "http ess.cn-wulanchabu.aliyuncs.com /?Action=DescribeScalingGroups" {
		t.Fatalf("%d %q %v", status, body, err)
	}
}

// A CONNECT to any other host, or to another port, is refused: the emulator is no proxy to the
// outside.
func TestConnectElsewhereIsRefused(t *testing.T) {
	srv, _ := startInterceptor(t)
	for _, target := range []string{"example.com:443", "location.aliyuncs.com:80", "aliyuncs.com.example.org:443"} {
		req, err := http.NewRequest(http.MethodConnect, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = target
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("CONNECT %s: %d, want 403", target, resp.StatusCode)
		}
	}
}
