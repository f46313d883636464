package cloud

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// vpcAnswer is a DescribeVpcs answer listing one VPC in the given status.
func vpcAnswer(id, status string) *vpc.DescribeVpcsResponse {
	return &vpc.DescribeVpcsResponse{RequestId: "req-vpcs", TotalCount: 1, PageSize: 50, PageNumber: 1,
		Vpcs: vpc.Vpcs{Vpc: []vpc.Vpc{{VpcId: id, Status: status, RegionId: testRegion}}}}
}

// A request that got no answer (the connection closed under it) is sent again by the transport,
// at most max_retries times, and the call succeeds once an answer comes.
func TestCallRetriesDroppedConnections(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxRetries int
		drops      int
	}{
		{"one drop", 3, 1},
		{"drops up to max_retries", 3, 3},
		{"more retries than drops", 8, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
				if hit <= tc.drops {
					dropConnection(t, w)
					return
				}
				writeJSON(w, vpcAnswer("vpc-1", VPCStatusAvailable))
			})
			got, err := api.client(t, tc.maxRetries).FindVPC(context.Background(), "vpc-1")
			if err != nil {
				t.Fatalf("FindVPC after %d dropped connections: %v", tc.drops, err)
			}
			if got.ID != "vpc-1" {
				t.Errorf("FindVPC returned %q, want vpc-1", got.ID)
			}
			if n := api.hitsOf("DescribeVpcs"); n != tc.drops+1 {
				t.Errorf("server saw %d requests, want %d (%d dropped, then the answer)", n, tc.drops+1, tc.drops)
			}
		})
	}
}

// More drops than max_retries fail with a TransportError that names the product, the action and
// the endpoint, and carries no signed query string or secret.
func TestCallFailsAfterMaxRetriesDrops(t *testing.T) {
	for _, maxRetries := range []int{0, 2} {
		api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
			dropConnection(t, w)
		})
		_, err := api.client(t, maxRetries).FindVPC(context.Background(), "vpc-1")
		var te *TransportError
		if !errors.As(err, &te) {
			t.Fatalf("max_retries=%d: want a *TransportError, got %T: %v", maxRetries, err, err)
		}
		if te.Product != ProductVPC || te.Action != "DescribeVpcs" {
			t.Errorf("TransportError names %s %s, want vpc DescribeVpcs", te.Product, te.Action)
		}
		if n := api.hitsOf("DescribeVpcs"); n != maxRetries+1 {
			t.Errorf("max_retries=%d: server saw %d requests, want %d", maxRetries, n, maxRetries+1)
		}
		text := err.Error()
		if !strings.Contains(text, api.host()) {
			t.Errorf("error does not name the endpoint %s: %s", api.host(), text)
		}
		if !strings.Contains(text, "no answer from the service") || !strings.Contains(text, "endpoints.vpc") {
			t.Errorf("error does not say what failed and what to check: %s", text)
		}
		assertNoSecrets(t, text)
		if ErrorCode(err) != "" || IsNotFound(err) {
			t.Errorf("a transport error has no vendor code, got ErrorCode %q", ErrorCode(err))
		}
	}
}

// An endpoint nobody listens on fails fast with the address, not a hang and not a signed URL.
func TestCallUnreachableEndpoint(t *testing.T) {
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		t.Error("no request should arrive")
	})
	c := api.client(t, 1)
	host := api.host()
	api.srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.ZoneIDs(ctx)
	var te *TransportError
	if !errors.As(err, &te) {
		t.Fatalf("want a *TransportError, got %T: %v", err, err)
	}
	if te.Product != ProductECS || te.Action != "DescribeZones" {
		t.Errorf("TransportError names %s %s, want ecs DescribeZones", te.Product, te.Action)
	}
	if !strings.Contains(err.Error(), host) {
		t.Errorf("error does not name the endpoint %s: %v", host, err)
	}
	assertNoSecrets(t, err.Error())
}

// OSS goes through the same transport: dropped connections are retried there too.
func TestOSSRetriesDroppedConnections(t *testing.T) {
	const drops = 2
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		if hit <= drops {
			dropConnection(t, w)
			return
		}
		writeBucketInfo(w, "ckpt")
	})
	info, err := api.client(t, 3).FindBucket(context.Background(), "ckpt")
	if err != nil {
		t.Fatalf("FindBucket after %d dropped connections: %v", drops, err)
	}
	if info == nil || info.Name != "ckpt" {
		t.Errorf("FindBucket returned %+v, want bucket ckpt", info)
	}
	if n := api.hitsOf("oss:bucketInfo"); n != drops+1 {
		t.Errorf("server saw %d requests, want %d", n, drops+1)
	}
}

// OSS drops beyond max_retries end in a TransportError too.
func TestOSSFailsAfterMaxRetriesDrops(t *testing.T) {
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		dropConnection(t, w)
	})
	_, err := api.client(t, 1).FindBucket(context.Background(), "ckpt")
	var te *TransportError
	if !errors.As(err, &te) {
		t.Fatalf("want a *TransportError, got %T: %v", err, err)
	}
	if te.Product != ProductOSS || te.Action != "GetBucketInfo" {
		t.Errorf("TransportError names %s %s, want oss GetBucketInfo", te.Product, te.Action)
	}
	if n := api.hitsOf("oss:bucketInfo"); n != 2 {
		t.Errorf("server saw %d requests, want 2 (max_retries=1)", n)
	}
	assertNoSecrets(t, err.Error())
}
