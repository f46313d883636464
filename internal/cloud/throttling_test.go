package cloud

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// The "try again" answers the service gives, with the statuses it gives them.
var tryAgainAnswers = []struct {
	code    string
	status  int
	message string
}{
	{"Throttling.User", http.StatusBadRequest, "Request was denied due to user flow control."},
	{"ServiceUnavailable", http.StatusServiceUnavailable, "The request has failed due to a temporary failure of the server."},
}

// Throttled k times with k < max_retries, a call retries and succeeds: k+1 requests in all.
func TestCallRetriesThrottlingWithinMaxRetries(t *testing.T) {
	fastWaits(t)
	const maxRetries = 4
	for _, answer := range tryAgainAnswers {
		for _, k := range []int{1, maxRetries - 1} {
			t.Run(answer.code+" x"+strconv.Itoa(k), func(t *testing.T) {
				api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
					if hit <= k {
						writeRPCError(w, r, answer.status, answer.code, answer.message, "req-"+strconv.Itoa(hit))
						return
					}
					writeJSON(w, vpcAnswer("vpc-1", VPCStatusAvailable))
				})
				if _, err := api.client(t, maxRetries).FindVPC(context.Background(), "vpc-1"); err != nil {
					t.Fatalf("FindVPC after %d x %s: %v", k, answer.code, err)
				}
				if n := api.hitsOf("DescribeVpcs"); n != k+1 {
					t.Errorf("server saw %d requests, want %d", n, k+1)
				}
			})
		}
	}
}

// Throttled on every attempt, a call gives up after max_retries retries with the service's code,
// status and request id.
func TestCallThrottlingBoundedByMaxRetries(t *testing.T) {
	fastWaits(t)
	for _, answer := range tryAgainAnswers {
		for _, maxRetries := range []int{0, 3} {
			t.Run(answer.code+" max_retries="+strconv.Itoa(maxRetries), func(t *testing.T) {
				api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
					writeRPCError(w, r, answer.status, answer.code, answer.message, "req-"+strconv.Itoa(hit))
				})
				_, err := api.client(t, maxRetries).FindVPC(context.Background(), "vpc-1")
				if got := ErrorCode(err); got != answer.code {
					t.Fatalf("want code %s, got %q (%v)", answer.code, got, err)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("want an *APIError, got %T", err)
				}
				if apiErr.HTTPStatus != answer.status {
					t.Errorf("HTTPStatus = %d, want %d", apiErr.HTTPStatus, answer.status)
				}
				// The last answer's request id, so a support ticket names the request that failed.
				if want := "req-" + strconv.Itoa(maxRetries+1); apiErr.RequestID != want {
					t.Errorf("RequestID = %q, want %q", apiErr.RequestID, want)
				}
				if n := api.hitsOf("DescribeVpcs"); n != maxRetries+1 {
					t.Errorf("server saw %d requests, want %d (one plus max_retries)", n, maxRetries+1)
				}
			})
		}
	}
}

// The transport leaves HTTP answers alone: an error answer reaches the call layer once per
// attempt, so with max_retries = 0 a 503 is one request, not a transport retry loop.
func TestTransportDoesNotRetryAnswers(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusBadRequest} {
		api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
			writeRPCError(w, r, status, "ServiceUnavailable", "busy", "req-1")
		})
		if _, err := api.client(t, 0).FindVPC(context.Background(), "vpc-1"); err == nil {
			t.Fatalf("status %d: want an error", status)
		}
		if n := api.hitsOf("DescribeVpcs"); n != 1 {
			t.Errorf("status %d: server saw %d requests, want 1", status, n)
		}
	}
}

// Codes that do not mean "try again" fail at once, whatever max_retries says; RetryOn makes a
// code retryable for one call only.
func TestCallRetriesOnlyTryAgainCodes(t *testing.T) {
	fastWaits(t)
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		switch action {
		case "DescribeVpcs":
			writeRPCError(w, r, http.StatusBadRequest, "InvalidParameter", "The specified parameter is not valid.", "req-bad")
		case "DeleteVpc":
			if hit <= 2 {
				writeRPCError(w, r, http.StatusBadRequest, "DependencyViolation", "vSwitches still exist", "req-dep")
				return
			}
			writeJSON(w, &vpc.DeleteVpcResponse{RequestId: "req-ok"})
		}
	})
	c := api.client(t, 5)
	if _, err := c.FindVPC(context.Background(), "vpc-1"); !IsCode(err, "InvalidParameter") {
		t.Fatalf("want InvalidParameter, got %v", err)
	}
	if n := api.hitsOf("DescribeVpcs"); n != 1 {
		t.Errorf("InvalidParameter was sent %d times, want 1", n)
	}

	del := func(opts ...CallOption) error {
		req := vpc.CreateDeleteVpcRequest()
		req.VpcId = "vpc-1"
		return c.Call(context.Background(), req, vpc.CreateDeleteVpcResponse(), opts...)
	}
	if err := del(); !IsCode(err, "DependencyViolation") {
		t.Fatalf("without RetryOn: want DependencyViolation at once, got %v", err)
	}
	if n := api.hitsOf("DeleteVpc"); n != 1 {
		t.Fatalf("without RetryOn: DeleteVpc sent %d times, want 1", n)
	}
	if err := del(RetryOn("DependencyViolation")); err != nil {
		t.Fatalf("with RetryOn: %v", err)
	}
	if n := api.hitsOf("DeleteVpc"); n != 3 {
		t.Errorf("with RetryOn: DeleteVpc sent %d times in all, want 3", n)
	}
}

// A context deadline bounds retries too: with a generous max_retries and the shipped backoff, a
// call throttled forever returns soon after its deadline with the deadline as the cause.
func TestCallThrottlingStopsAtDeadline(t *testing.T) {
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		writeRPCError(w, r, http.StatusBadRequest, "Throttling.User", "Request was denied due to user flow control.", "req-1")
	})
	c := api.client(t, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.FindVPC(ctx, "vpc-1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline as the cause, got %v", err)
	}
	if !strings.Contains(err.Error(), "DescribeVpcs") {
		t.Errorf("error does not name the call: %v", err)
	}
	// Coarse bound: the retry loop does not outlive its context by the next backoff step.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("returned %v after a 300ms deadline", took)
	}
}

// OSS throttling and 503s are retried the same way, and give up with the code after max_retries.
// Any 503 counts as ServiceUnavailable, whatever OSS calls it.
func TestOSSThrottling(t *testing.T) {
	fastWaits(t)
	for _, tc := range []struct {
		code, wantCode string
		status         int
	}{
		{"Throttling.User", "Throttling.User", http.StatusBadRequest},
		{"ServerBusy", "ServiceUnavailable", http.StatusServiceUnavailable},
	} {
		t.Run(tc.code, func(t *testing.T) {
			const maxRetries = 3
			api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
				if hit <= maxRetries-1 || r.URL.Path == "/never/" {
					writeOSSError(w, r, tc.status, tc.code, "slow down", "oss-req-"+strconv.Itoa(hit))
					return
				}
				writeBucketInfo(w, "ckpt")
			})
			c := api.client(t, maxRetries)
			if _, err := c.FindBucket(context.Background(), "ckpt"); err != nil {
				t.Fatalf("FindBucket after %d x %s: %v", maxRetries-1, tc.code, err)
			}
			if n := api.hitsOf("oss:bucketInfo"); n != maxRetries {
				t.Errorf("server saw %d requests, want %d", n, maxRetries)
			}

			_, err := c.FindBucket(context.Background(), "never")
			if got := ErrorCode(err); got != tc.wantCode {
				t.Fatalf("want code %s, got %q (%v)", tc.wantCode, got, err)
			}
			if n := api.hitsOf("oss:bucketInfo") - maxRetries; n != maxRetries+1 {
				t.Errorf("always throttled: server saw %d requests, want %d", n, maxRetries+1)
			}
		})
	}
}
