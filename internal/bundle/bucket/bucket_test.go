package bucket

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The policy grants each role GetObject on its own prefixes only, in the vendor's syntax, and
// reads back to the same readers; a statement Policy would not write is no reader.
func TestPolicyRoundTrip(t *testing.T) {
	readers := []Reader{{KeyPrefix: "workers", RoleName: "wk"}, {KeyPrefix: "cp/first", RoleName: "cp"}, {KeyPrefix: "cp/join", RoleName: "cp"}}
	doc := Policy("bb", "1234", readers, nil)
	var d struct {
		Version   string
		Statement []struct {
			Effect                      string
			Action, Principal, Resource []string
		}
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	if d.Version != "1" || len(d.Statement) != 2 {
		t.Fatalf("policy %s: want Version \"1\" and one statement per role", doc)
	}
	want := `{"Effect":"Allow","Action":["oss:GetObject"],"Principal":["arn:sts::1234:assumed-role/cp/*"],` +
		`"Resource":["acs:oss:*:1234:bb/cp/first/*","acs:oss:*:1234:bb/cp/join/*"]}`
	if !strings.Contains(doc, want) {
		t.Fatalf("policy %s\nwant the control-plane role's statement %s", doc, want)
	}
	if strings.Contains(doc, "assumed-role/wk/*\"],\"Resource\":[\"acs:oss:*:1234:bb/cp") {
		t.Fatalf("the worker role reads the control plane's prefix: %s", doc)
	}
	got := ReadersIn(doc, "bb", "1234")
	SortReaders(readers)
	if !reflect.DeepEqual(got, readers) {
		t.Fatalf("ReadersIn = %v, want %v", got, readers)
	}
	other := `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:*"],"Principal":["arn:sts::1234:assumed-role/x/*"],"Resource":["acs:oss:*:1234:bb/p/*"]},` +
		`{"Effect":"Allow","Action":["oss:GetObject"],"Principal":["*"],"Resource":["acs:oss:*:1234:bb/p/*"]}]}`
	if got := ReadersIn(other, "bb", "1234"); len(got) != 0 {
		t.Fatalf("ReadersIn of statements Policy does not write = %v, want none", got)
	}
}

func TestCheckReader(t *testing.T) {
	for _, r := range []Reader{{"a", "r"}, {"gpucluster-bundles/cp", "role.x-1"}} {
		if msg := CheckReader(r); msg != "" {
			t.Errorf("CheckReader(%v) = %q, want ok", r, msg)
		}
	}
	for _, r := range []Reader{{"", "r"}, {"/a", "r"}, {"a/", "r"}, {"a/*", "r"}, {"a/../b", "r"}, {"a//b", "r"}, {"a", ""}, {"a", "r_1"}} {
		if msg := CheckReader(r); msg == "" {
			t.Errorf("CheckReader(%v) took it, want refused", r)
		}
	}
}

// Writers get PutObject on their exact objects, after the readers' statements, which read back
// unchanged: a writer is no reader.
func TestPolicyWithWriters(t *testing.T) {
	readers := []Reader{{KeyPrefix: "b/workers", RoleName: "wk"}}
	doc := Policy("bb", "1234", readers, []Writer{{Key: "b/workers/join-token", RoleName: "cp"}})
	want := `{"Effect":"Allow","Action":["oss:PutObject"],"Principal":["arn:sts::1234:assumed-role/cp/*"],"Resource":["acs:oss:*:1234:bb/b/workers/join-token"]}`
	if !strings.Contains(doc, want) {
		t.Fatalf("policy %s\nwant the writer's statement %s", doc, want)
	}
	if got := ReadersIn(doc, "bb", "1234"); !reflect.DeepEqual(got, readers) {
		t.Fatalf("ReadersIn = %v, want %v", got, readers)
	}
}

func TestWritersRoundTrip(t *testing.T) {
	writers := []Writer{{Key: "b/cp-join/join-token", RoleName: "cp"}, {Key: "b/workers/join-token", RoleName: "cp"}, {Key: "etcd-snapshots/c/*", RoleName: "cp"}}
	doc := Policy("bb", "1234", []Reader{{KeyPrefix: "b/workers", RoleName: "wk"}}, writers)
	if got := WritersIn(doc, "bb", "1234"); !reflect.DeepEqual(got, writers) {
		t.Fatalf("WritersIn = %v, want %v", got, writers)
	}
	if got := WritersIn(Policy("bb", "1234", []Reader{{KeyPrefix: "b/workers", RoleName: "wk"}}, nil), "bb", "1234"); len(got) != 0 {
		t.Fatalf("WritersIn of a readers-only policy = %v", got)
	}
}

// A prefix writer may put under a prefix outside every reader's: one that is a reader's, holds
// one or lies under one could replace bundles.
func TestCheckWriters(t *testing.T) {
	readers := []Reader{{KeyPrefix: "b/workers", RoleName: "wk"}, {KeyPrefix: "b/cp", RoleName: "cp"}}
	for key, bad := range map[string]bool{"etcd-snapshots/c/*": false, "b/workers/join-token": false, "b/workers/*": true, "b/*": true,
		"b/cp/snap/*": true, "b/cpx/*": false} {
		if msg := CheckWriters(readers, []Writer{{Key: key, RoleName: "cp"}}); (msg != "") != bad {
			t.Errorf("writer %q: %q; want refused %v", key, msg, bad)
		}
	}
}
