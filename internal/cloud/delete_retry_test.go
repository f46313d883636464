package cloud

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// A delete waits out every DependencyViolation variant the vendor answers (the dependent is named
// in the code's suffix), then succeeds once the dependents are gone.
func TestDeleteVPCWaitsOutEveryDependencyViolationVariant(t *testing.T) {
	fastWaits(t)
	variants := []string{"DependencyViolation.Instance", "DependencyViolation.VSwitch",
		"DependencyViolation.SecurityGroup", "DependencyViolation.NatGateway", "DependencyViolation"}
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		switch action {
		case "DeleteVpc":
			if hit <= len(variants) {
				writeRPCError(w, r, http.StatusBadRequest, variants[hit-1], "The specified VPC has dependent resources.", "req-"+strconv.Itoa(hit))
				return
			}
			writeJSON(w, &vpc.DeleteVpcResponse{RequestId: "req-deleted"})
		case "DescribeVpcs":
			writeJSON(w, &vpc.DescribeVpcsResponse{RequestId: "req-gone", PageSize: 50, PageNumber: 1})
		default:
			t.Errorf("unexpected action %s", action)
		}
	})
	if err := api.client(t, 2).DeleteVPC(context.Background(), "vpc-1"); err != nil {
		t.Fatalf("DeleteVPC: %v", err)
	}
	if n := api.hitsOf("DeleteVpc"); n != len(variants)+1 {
		t.Errorf("DeleteVpc sent %d times, want %d (one per refusal, then the delete)", n, len(variants)+1)
	}
}

// A refusal that is not about dependents is not retried: the delete fails at once with its code.
func TestDeleteVPCDoesNotRetryOtherRefusals(t *testing.T) {
	fastWaits(t)
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		writeRPCError(w, r, http.StatusForbidden, "Forbidden.RAM", "User not authorized to operate on the specified resource.", "req-"+strconv.Itoa(hit))
	})
	err := api.client(t, 2).DeleteVPC(context.Background(), "vpc-1")
	if !IsCode(err, "Forbidden.RAM") {
		t.Fatalf("DeleteVPC: got %v, want Forbidden.RAM", err)
	}
	if n := api.hitsOf("DeleteVpc"); n != 1 {
		t.Errorf("DeleteVpc sent %d times, want 1", n)
	}
}

func TestIsDependencyViolation(t *testing.T) {
	for code, want := range map[string]bool{
		"DependencyViolation": true, "DependencyViolation.SnatEntry": true, "DependencyViolation.EIPS": true,
		"DependencyViolationX": false, "InvalidVpcId.NotFound": false, "": false,
	} {
		if got := IsDependencyViolation(&APIError{Code: code}); got != want {
			t.Errorf("IsDependencyViolation(%q) = %v, want %v", code, got, want)
		}
	}
}
