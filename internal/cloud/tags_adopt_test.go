package cloud

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestDiffTags(t *testing.T) {
	have := map[string]string{"keep": "1", "change": "old", "drop-b": "x", "drop-a": "y"}
	want := map[string]string{"keep": "1", "change": "new", "add": "z"}
	set, remove := DiffTags(have, want)
	if !maps.Equal(set, map[string]string{"change": "new", "add": "z"}) {
		t.Errorf("set = %v", set)
	}
	if !slices.Equal(remove, []string{"drop-a", "drop-b"}) {
		t.Errorf("remove = %v, want sorted [drop-a drop-b]", remove)
	}
	set, remove = DiffTags(want, want)
	if len(set) != 0 || len(remove) != 0 {
		t.Errorf("no change must mean no call: set %v remove %v", set, remove)
	}
}

func TestClientTokenIsDeterministicPerRequestAndGeneration(t *testing.T) {
	a := ClientToken(0, "CreateVpc", "r", "net")
	if a != ClientToken(0, "CreateVpc", "r", "net") {
		t.Fatal("the same request must get the same token")
	}
	if a == ClientToken(1, "CreateVpc", "r", "net") || a == ClientToken(0, "CreateVpc", "r", "net2") {
		t.Fatal("another generation or request must get another token")
	}
	// Parts are joined with a separator, so moving a boundary is another request.
	if ClientToken(0, "ab", "c") == ClientToken(0, "a", "bc") {
		t.Fatal("parts must not run into each other")
	}
	if len(a) > 64 {
		t.Fatalf("token %q is longer than the 64 characters ClientToken takes", a)
	}
}

func TestCreateOrAdopt(t *testing.T) {
	deleted := &APIError{Code: "InvalidVpcId.NotFound"}
	t.Run("adopts what the first token made", func(t *testing.T) {
		calls := 0
		id, err := CreateOrAdopt("VPC", []string{"p"}, func(string) (string, error) { calls++; return "vpc-1", nil },
			func(string) error { return nil })
		if err != nil || id != "vpc-1" || calls != 1 {
			t.Fatalf("id %q err %v calls %d", id, err, calls)
		}
	})
	t.Run("skips tokens of deleted objects and mismatched parameters", func(t *testing.T) {
		var tokens []string
		id, err := CreateOrAdopt("VPC", []string{"p"}, func(token string) (string, error) {
			tokens = append(tokens, token)
			switch len(tokens) {
			case 1:
				return "vpc-gone", nil
			case 2:
				return "", &APIError{Code: "IdempotentParameterMismatch"}
			}
			return "vpc-new", nil
		}, func(id string) error {
			if id == "vpc-gone" {
				return deleted
			}
			return nil
		})
		if err != nil || id != "vpc-new" {
			t.Fatalf("id %q err %v", id, err)
		}
		want := []string{ClientToken(0, "p"), ClientToken(1, "p"), ClientToken(2, "p")}
		if !slices.Equal(tokens, want) {
			t.Fatalf("tokens %v, want generations 0, 1, 2", tokens)
		}
	})
	t.Run("other errors stop it", func(t *testing.T) {
		boom := &APIError{Code: "Forbidden.RAM"}
		_, err := CreateOrAdopt("VPC", []string{"p"}, func(string) (string, error) { return "", boom }, func(string) error { return nil })
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("gives up after every generation", func(t *testing.T) {
		_, err := CreateOrAdopt("VPC", []string{"p"}, func(string) (string, error) { return "vpc-gone", nil },
			func(string) error { return deleted })
		if err == nil {
			t.Fatal("want an error once every token answered with a deleted object")
		}
	})
}

func TestNotFoundMatchesErrNotFound(t *testing.T) {
	for _, err := range []error{
		notFound(ProductVPC, "DescribeVpcs", "InvalidVpcId.NotFound", "VPC vpc-1"),
		&APIError{Code: "NoSuchBucket"},
		&TransportError{Err: &APIError{Code: "InvalidInstanceId.NotFound"}},
	} {
		if !errors.Is(err, ErrNotFound) || !IsNotFound(err) {
			t.Errorf("%v must match ErrNotFound", err)
		}
	}
	if errors.Is(&APIError{Code: "Throttling"}, ErrNotFound) || IsNotFound(nil) {
		t.Error("only not-found codes match ErrNotFound")
	}
}

func TestClientTokenIsStableDistinctAndShort(t *testing.T) {
	a := ClientToken(0, "pool-batch", "np-0123456789ab", "1f2e3d4c", "0", "0")
	if a != ClientToken(0, "pool-batch", "np-0123456789ab", "1f2e3d4c", "0", "0") {
		t.Fatal("the same parts must give the same token (an idempotent resend)")
	}
	seen := map[string]bool{}
	for gen := 0; gen < 3; gen++ {
		for round := 0; round < 3; round++ {
			for batch := 0; batch < 10; batch++ {
				tok := ClientToken(gen, "pool-batch", strings.Repeat("x", 80), strconv.Itoa(round), strconv.Itoa(batch))
				if seen[tok] {
					t.Fatalf("token %s repeats", tok)
				}
				seen[tok] = true
				if len(tok) > 64 {
					t.Fatalf("token %s is longer than the 64 characters ECS takes", tok)
				}
			}
		}
	}
	// Parts are joined with a separator no id contains: ("ab","c") and ("a","bc") differ.
	if ClientToken(0, "ab", "c") == ClientToken(0, "a", "bc") {
		t.Fatal("tokens of different parts collide")
	}
}
