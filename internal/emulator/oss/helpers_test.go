package oss_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"

	emu "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

const (
	testAK     = "emulator"
	testSecret = "emulator-secret"
	stsAK      = "STS.temporary"
	stsSecret  = "sts-secret"
	region     = "cn-wulanchabu"
)

// keyStore stands in for the emulator's credential store: the static key and
// one STS key, which holds the session stsPrincipal of a role and lives
// until stsExpires.
func keyStore(ak string) (emu.Key, bool) {
	switch ak {
	case testAK:
		return emu.Key{Secret: testSecret}, true
	case stsAK:
		return emu.Key{Secret: stsSecret, Token: stsToken, Expires: stsExpires, Principal: stsPrincipal}, true
	}
	return emu.Key{}, false
}

const (
	stsToken     = "sts-token-value"
	stsPrincipal = "arn:sts::1000000000000000:assumed-role/reader/session-1"
)

var stsExpires = time.Now().Add(time.Hour)

// env is one emulator handler behind an httptest server.
type env struct {
	h   *emu.Handler
	srv *httptest.Server
	ctx context.Context

	mu    sync.Mutex
	calls []string // "Action" or "Action:Code" per request, via the observer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{h: emu.NewHandler(emu.Config{Credentials: keyStore}), ctx: context.Background()}
	e.h.SetObserver(func(action, code string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if code != "" {
			action += ":" + code
		}
		e.calls = append(e.calls, action)
	})
	e.srv = httptest.NewServer(e.h)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) observed() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

// client builds a real SDK client for the emulator. Retries are off so error
// tests see exactly one request.
func (e *env) client(ak, sk string, extra ...func(*oss.Config)) *oss.Client {
	cfg := oss.LoadDefaultConfig().
		WithCredentialsProvider(credentials.NewStaticCredentialsProvider(ak, sk)).
		WithRegion(region).
		WithEndpoint(e.srv.URL).
		WithUsePathStyle(true).
		WithRetryMaxAttempts(1).
		WithConnectTimeout(5 * time.Second)
	for _, f := range extra {
		f(cfg)
	}
	return oss.NewClient(cfg)
}

func (e *env) defaultClient() *oss.Client { return e.client(testAK, testSecret) }

// wantServiceError asserts err is an OSS service error with the given status
// and code.
func wantServiceError(t *testing.T, err error, status int, code string) {
	t.Helper()
	_ = serviceError(t, err, status, code)
}

// serviceError asserts as wantServiceError does and returns the error.
func serviceError(t *testing.T, err error, status int, code string) *oss.ServiceError {
	t.Helper()
	var se *oss.ServiceError
	if !errors.As(err, &se) {
		t.Fatalf("want service error %d %s, got %v", status, code, err)
	}
	if se.StatusCode != status || se.Code != code {
		t.Fatalf("want %d %s, got %d %s (%s)", status, code, se.StatusCode, se.Code, se.Message)
	}
	if se.RequestID == "" {
		t.Errorf("error %s has no request id", code)
	}
	return se
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func createBucket(t *testing.T, c *oss.Client, name string) {
	t.Helper()
	_, err := c.PutBucket(context.Background(), &oss.PutBucketRequest{Bucket: oss.Ptr(name)})
	mustOK(t, err)
}
