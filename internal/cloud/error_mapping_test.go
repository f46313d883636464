package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// Every RPC error answer becomes an *APIError with the service's code, message, request id and
// status, and the product and action of the call; ErrorCode, IsCode and IsNotFound read it.
func TestRPCErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		status   int
		code     string
		message  string
		notFound bool
	}{
		{http.StatusNotFound, "InvalidVpcId.NotFound", "The specified VPC does not exist.", true},
		{http.StatusBadRequest, "InvalidParameter", "The specified parameter is not valid.", false},
		{http.StatusForbidden, "Forbidden.RAM", "User not authorized to operate on the specified resource.", false},
		{http.StatusForbidden, "IncorrectInstanceStatus", "The current status of the resource does not support this operation.", false},
		{http.StatusBadRequest, "OperationDenied.NoStock", "The requested resource is sold out in the specified zone.", false},
	} {
		t.Run(tc.code, func(t *testing.T) {
			api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
				writeRPCError(w, r, tc.status, tc.code, tc.message, "req-"+tc.code)
			})
			_, err := api.client(t, 2).FindVPC(context.Background(), "vpc-1")
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("want an *APIError, got %T: %v", err, err)
			}
			want := APIError{Product: ProductVPC, Action: "DescribeVpcs", Code: tc.code, Message: tc.message,
				RequestID: "req-" + tc.code, HTTPStatus: tc.status}
			if *apiErr != want {
				t.Errorf("APIError = %+v\nwant       %+v", *apiErr, want)
			}
			if api.hitsOf("DescribeVpcs") != 1 {
				t.Errorf("a final code was sent %d times, want 1", api.hitsOf("DescribeVpcs"))
			}
			if ErrorCode(err) != tc.code || !IsCode(err, "Other", tc.code) || IsCode(err, "Other") {
				t.Errorf("ErrorCode/IsCode disagree with code %s: ErrorCode=%q", tc.code, ErrorCode(err))
			}
			if IsNotFound(err) != tc.notFound {
				t.Errorf("IsNotFound = %v, want %v", IsNotFound(err), tc.notFound)
			}
			// Wrapping keeps every helper working: resources add context with %w.
			wrapped := fmt.Errorf("reading network: %w", err)
			if ErrorCode(wrapped) != tc.code || IsNotFound(wrapped) != tc.notFound {
				t.Errorf("wrapped error lost its code: %q", ErrorCode(wrapped))
			}
			text := err.Error()
			for _, part := range []string{"vpc DescribeVpcs", tc.code, tc.message, "req-" + tc.code} {
				if !strings.Contains(text, part) {
					t.Errorf("error text %q lacks %q", text, part)
				}
			}
		})
	}
}

// The helpers answer "no" for anything that is not a service answer.
func TestErrorHelpersOnOtherErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("InvalidVpcId.NotFound"), &TransportError{Product: "vpc", Action: "DescribeVpcs", Err: errors.New("EOF")}} {
		if ErrorCode(err) != "" || IsCode(err, "InvalidVpcId.NotFound", "") || IsNotFound(err) {
			t.Errorf("%v: ErrorCode=%q IsCode=%v IsNotFound=%v, want none", err, ErrorCode(err), IsCode(err, "InvalidVpcId.NotFound", ""), IsNotFound(err))
		}
	}
	// The many spellings of "does not exist".
	for code, want := range map[string]bool{
		"InvalidInstanceId.NotFound": true, "InvalidFileSystem.NotFound": true, "NoSuchBucket": true,
		"NoSuchLifecycle": true, "EntityNotFound": true, "Forbidden": false, "NotFoundButNot": false,
	} {
		if got := IsNotFound(&APIError{Code: code}); got != want {
			t.Errorf("IsNotFound(%s) = %v, want %v", code, got, want)
		}
	}
}

// A Describe that succeeds but lists nothing is a typed not-found, like the service's own.
func TestFinderNotFound(t *testing.T) {
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		writeJSON(w, &vpc.DescribeVpcsResponse{RequestId: "req-empty", PageNumber: 1, PageSize: 50})
	})
	_, err := api.client(t, 0).FindVPC(context.Background(), "vpc-gone")
	if !IsNotFound(err) || ErrorCode(err) != "InvalidVpcId.NotFound" {
		t.Fatalf("want InvalidVpcId.NotFound, got %v", err)
	}
	if !strings.Contains(err.Error(), "vpc-gone") {
		t.Errorf("not-found error does not name the id: %v", err)
	}
}

// Credential errors are rewritten into plain words naming the access key id and what to check.
// The secret, the token, and the server's string to sign (which the service echoes back in
// SignatureDoesNotMatch) never reach the error text.
func TestCredentialErrorsExplained(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   []string
	}{
		{http.StatusBadRequest, "SignatureDoesNotMatch", []string{"signature", "secret_key", EnvAccessKeySecret}},
		{http.StatusBadRequest, "IncompleteSignature", []string{"signature", "secret_key"}},
		{http.StatusNotFound, "InvalidAccessKeyId.NotFound", []string{"does not know access key", "access_key", EnvAccessKeyID}},
		{http.StatusBadRequest, "InvalidSecurityToken.Expired", []string{"security token", "fresh STS credentials"}},
	} {
		t.Run(tc.code, func(t *testing.T) {
			api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
				writeRPCError(w, r, tc.status, tc.code,
					"Specified signature is not matched with our calculation. server string to sign is:POST&%2F&AccessKeyId%3D"+testAccessKeyID+"%26SecurityToken%3D"+testSecurityToken,
					"req-cred")
			})
			_, err := api.client(t, 3).ZoneIDs(context.Background())
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("want an *APIError, got %T: %v", err, err)
			}
			if apiErr.Code != tc.code || apiErr.Product != ProductECS || apiErr.Action != "DescribeZones" || apiErr.HTTPStatus != tc.status {
				t.Errorf("APIError = %+v", *apiErr)
			}
			if apiErr.AccessKeyID != testAccessKeyID {
				t.Errorf("AccessKeyID = %q, want the rejected key %q", apiErr.AccessKeyID, testAccessKeyID)
			}
			text := err.Error()
			if !strings.Contains(text, testAccessKeyID) {
				t.Errorf("error does not name the access key: %s", text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("error lacks %q: %s", w, text)
				}
			}
			if strings.Contains(text, "string to sign") {
				t.Errorf("error echoes the server's string to sign: %s", text)
			}
			assertNoSecrets(t, text)
			if api.hitsOf("DescribeZones") != 1 {
				t.Errorf("a credential error was sent %d times, want 1", api.hitsOf("DescribeZones"))
			}
		})
	}
}

// Other codes leave AccessKeyID empty: only credential errors name the key.
func TestAccessKeyOnlyOnCredentialErrors(t *testing.T) {
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		writeRPCError(w, r, http.StatusForbidden, "Forbidden.RAM", "not authorized", "req-ram")
	})
	_, err := api.client(t, 0).ZoneIDs(context.Background())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.AccessKeyID != "" {
		t.Fatalf("want an APIError without AccessKeyID, got %#v", err)
	}
}

// OSS answers map the same way: XML error, code, request id, status, product oss.
func TestOSSErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		status   int
		code     string
		notFound bool
		want     string
	}{
		{http.StatusNotFound, "NoSuchBucket", true, "The specified bucket does not exist."},
		{http.StatusForbidden, "AccessDenied", false, "You have no right to access this object."},
		{http.StatusForbidden, "InvalidAccessKeyId", false, "does not know access key"},
		{http.StatusForbidden, "SignatureDoesNotMatch", false, "secret_key"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
				msg := "The specified bucket does not exist."
				if tc.status == http.StatusForbidden {
					msg = "You have no right to access this object."
				}
				writeOSSError(w, r, tc.status, tc.code, msg, "oss-req-"+tc.code)
			})
			_, err := api.client(t, 2).FindBucket(context.Background(), "ckpt")
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("want an *APIError, got %T: %v", err, err)
			}
			if apiErr.Product != ProductOSS || apiErr.Action != "GetBucketInfo" || apiErr.Code != tc.code ||
				apiErr.HTTPStatus != tc.status || apiErr.RequestID != "oss-req-"+tc.code {
				t.Errorf("APIError = %+v", *apiErr)
			}
			if IsNotFound(err) != tc.notFound {
				t.Errorf("IsNotFound = %v, want %v", IsNotFound(err), tc.notFound)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error lacks %q: %v", tc.want, err)
			}
			assertNoSecrets(t, err.Error())
			if api.hitsOf("oss:bucketInfo") != 1 {
				t.Errorf("a final code was sent %d times, want 1", api.hitsOf("oss:bucketInfo"))
			}
		})
	}
}
