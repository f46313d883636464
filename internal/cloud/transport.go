package cloud

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/time/rate"
)

// callIDHeader carries, from the call wrapper to the transport, the key under which the call's
// context is parked. The RPC SDK builds its *http.Request without a context, so without this a
// cancelled Terraform operation would keep waiting on the network. The header is removed before
// the request leaves the process; RPC signatures cover only the query string, so it is never
// part of what the service checks.
const callIDHeader = "X-Gpucluster-Call"

// transport is the one http.RoundTripper under every SDK client. In order, it
//   - binds the request to its call's context (cancellation, deadlines);
//   - waits for a token of the shared rate limiter, so `rate_limit` holds across all resources;
//   - sends through go-retryablehttp, which retries requests that got no answer at all
//     (connection refused, reset, EOF) with exponential backoff and jitter, at most maxRetries
//     times. Answers with an error code are not retried here: the call layer does that, because an
//     RPC retry must be signed again with a fresh SignatureNonce.
type transport struct {
	limiter  *rate.Limiter
	retrying *retryablehttp.Client

	nextID   atomic.Uint64
	contexts sync.Map // call id -> context.Context
}

// retryWait bounds the transport's backoff. Small on purpose: a dropped connection is usually
// over in milliseconds, and the call layer adds its own, longer backoff for throttling.
const (
	transportWaitMin = 100 * time.Millisecond
	transportWaitMax = 2 * time.Second
)

func newTransport(maxRetries int, requestsPerSecond float64) *transport {
	base := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		// A short dial timeout keeps an unreachable endpoint from hanging a plan.
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// ResponseHeaderTimeout guards against a server that accepts and then says nothing.
		ResponseHeaderTimeout: 60 * time.Second,
	}
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{Transport: base}
	rc.Logger = nil // it would log request URLs, which carry signatures; the call layer logs instead
	rc.RetryMax = maxRetries
	rc.RetryWaitMin = transportWaitMin
	rc.RetryWaitMax = transportWaitMax
	rc.CheckRetry = retryOnlyUnanswered
	rc.Backoff = jitteredBackoff
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler

	limit := rate.Inf
	burst := 1
	if requestsPerSecond > 0 {
		limit = rate.Limit(requestsPerSecond)
		burst = max(1, int(requestsPerSecond))
	}
	return &transport{limiter: rate.NewLimiter(limit, burst), retrying: rc}
}

// bind parks ctx and returns the header value that finds it again, plus a release function.
func (t *transport) bind(ctx context.Context) (string, func()) {
	id := strconv.FormatUint(t.nextID.Add(1), 36)
	t.contexts.Store(id, ctx)
	return id, func() { t.contexts.Delete(id) }
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if id := req.Header.Get(callIDHeader); id != "" {
		if bound, ok := t.contexts.Load(id); ok {
			ctx = bound.(context.Context)
		}
		req = req.Clone(ctx)
		req.Header.Del(callIDHeader)
	}
	if err := t.limiter.Wait(ctx); err != nil {
		return nil, err
	}
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, redactError(err)
	}
	resp, err := t.retrying.Do(rreq.WithContext(ctx))
	if err != nil {
		return nil, transportCause(err)
	}
	return resp, nil
}

// retryOnlyUnanswered retries when no HTTP answer came back. HTTP answers, including 5xx and
// throttling, go up to the call layer, which knows the vendor's error codes.
func retryOnlyUnanswered(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err == nil {
		return false, nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false, err
	}
	return true, nil
}

// jitteredBackoff is exponential backoff with full jitter: a random wait in [0, min*2^attempt],
// capped at max. Full jitter spreads a burst of clients that failed together.
func jitteredBackoff(minWait, maxWait time.Duration, attempt int, _ *http.Response) time.Duration {
	return backoff(minWait, maxWait, attempt)
}

func backoff(minWait, maxWait time.Duration, attempt int) time.Duration {
	ceiling := minWait << min(attempt, 20)
	if ceiling <= 0 || ceiling > maxWait {
		ceiling = maxWait
	}
	return minWait/2 + rand.N(ceiling-minWait/2+1)
}
