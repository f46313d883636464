// Package bucket makes and keeps the OSS bucket that node pools' bootstrap bundles go in (issue
// #31): private, versioned, public access blocked, encrypted at rest, and a bucket policy that
// lets each reader, a RAM role, GetObject only under its own key prefix. The provider's
// gpucluster_bootstrap_bucket maps its attributes to this package; the pools upload and prune
// their bundles through package upload.
//
// Who can read a bundle: a bucket policy grants a RAM role's sessions, named
// "arn:sts::<account uid>:assumed-role/<role name>/*", and the resource
// "acs:oss:*:<account uid>:<bucket>/<prefix>/*"
// (https://www.alibabacloud.com/help/en/oss/user-guide/bucket-policy, "Grant read-only access to
// specific RAM roles"; element syntax:
// https://www.alibabacloud.com/help/en/oss/user-guide/authorization-syntax-and-elements). The
// account uid is the bucket owner's id, read back with GetBucketInfo, so no STS call is needed.
// A bucket policy only grants: a role whose own RAM policy grants oss:GetObject on every bucket
// can still read, which is why the modules give roles no such policy.
package bucket

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// TagKey marks a bucket made by gpucluster_bootstrap_bucket; its value is the bucket's name.
const TagKey = "gpucluster:bootstrap-bucket"

// Encryption algorithms a bootstrap bucket takes. KMS uses the key KMS manages for OSS in the
// region (https://www.alibabacloud.com/help/en/oss/user-guide/server-side-encryption-8).
const (
	EncryptionKMS    = "KMS"
	EncryptionAES256 = "AES256"
)

// Reader is one role that may read bundles under one key prefix.
type Reader struct {
	KeyPrefix string
	RoleName  string
}

var (
	prefixRE = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)
	roleRE   = regexp.MustCompile(`^[A-Za-z0-9.-]{1,64}$`)
)

// CheckReader says what is wrong with r, or "" when nothing is: a prefix of letters, digits and
// "._-" segments joined by "/" (no "*", which the policy would read as a wildcard, no empty, "."
// or ".." segment), and a RAM role name (1 to 64 letters, digits, "." and "-").
func CheckReader(r Reader) string {
	if !prefixRE.MatchString(r.KeyPrefix) {
		return fmt.Sprintf("key_prefix %q is not segments of letters, digits and '._-' joined by '/' (no leading or trailing '/', no '*')", r.KeyPrefix)
	}
	for _, seg := range strings.Split(r.KeyPrefix, "/") {
		if seg == "." || seg == ".." {
			return fmt.Sprintf("key_prefix %q has a %q segment", r.KeyPrefix, seg)
		}
	}
	if !roleRE.MatchString(r.RoleName) {
		return fmt.Sprintf("ram_role_name %q is not a RAM role name (1 to 64 letters, digits, '.' and '-')", r.RoleName)
	}
	return ""
}

type statement struct {
	Effect    string   `json:"Effect"`
	Action    []string `json:"Action"`
	Principal []string `json:"Principal"`
	Resource  []string `json:"Resource"`
}

type document struct {
	Version   string      `json:"Version"`
	Statement []statement `json:"Statement"`
}

func principal(owner, role string) string {
	return "arn:sts::" + owner + ":assumed-role/" + role + "/*"
}

func resource(owner, bucket, prefix string) string {
	return "acs:oss:*:" + owner + ":" + bucket + "/" + prefix + "/*"
}

// Writer is one role that may write one object: the control-plane role writes the join
// material (a fresh bootstrap token, a certificate key) where joining nodes read it (issue #31,
// bootstrap's JoinStore). An exact key, so the writer can replace no bundle; or, for the etcd
// snapshots (issue #34, bootstrap's EtcdBackup), every key under a prefix, Key "<prefix>/*" (the
// policy's resource wildcard, https://www.alibabacloud.com/help/en/oss/user-guide/tutorial-use-ram-policy-editor-to-generate-ram-policies),
// which CheckWriters keeps apart from every reader's prefix.
type Writer struct {
	Key      string
	RoleName string
}

// Policy is the bucket policy for readers and writers: one Allow of oss:GetObject per reading
// role, on the prefixes it reads, then one Allow of oss:PutObject per writing role on its exact
// objects (a PutObject grant covers an overwrite; no delete, no listing), in a stable order. A
// reader's GetObject on its prefix covers an object a writer puts there. owner is the account uid.
func Policy(bucket, owner string, readers []Reader, writers []Writer) string {
	doc := document{Version: "1", Statement: []statement{}}
	byRole := map[string][]string{}
	for _, r := range readers {
		byRole[r.RoleName] = append(byRole[r.RoleName], resource(owner, bucket, r.KeyPrefix))
	}
	doc.Statement = appendGrants(doc.Statement, "oss:GetObject", owner, byRole)
	byRole = map[string][]string{}
	for _, w := range writers {
		byRole[w.RoleName] = append(byRole[w.RoleName], "acs:oss:*:"+owner+":"+bucket+"/"+w.Key)
	}
	doc.Statement = appendGrants(doc.Statement, "oss:PutObject", owner, byRole)
	out, _ := json.Marshal(doc) // strings and slices only: it cannot fail
	return string(out)
}

// appendGrants adds one Allow of action per role on its resources, roles and resources sorted.
func appendGrants(sts []statement, action, owner string, byRole map[string][]string) []statement {
	roles := make([]string, 0, len(byRole))
	for role := range byRole {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	for _, role := range roles {
		res := byRole[role]
		sort.Strings(res)
		sts = append(sts, statement{Effect: "Allow", Action: []string{action},
			Principal: []string{principal(owner, role)}, Resource: compactStrings(res)})
	}
	return sts
}

// ReadersIn is the readers a policy document grants, as Policy writes them: statements that
// Allow exactly oss:GetObject to role sessions on prefixes of bucket. Anything else in the
// document is not a reader; a document Policy would not write again shows as a difference in the
// readers. Sorted by prefix, then role.
func ReadersIn(doc, bucket, owner string) []Reader {
	out := []Reader{}
	for _, g := range grantsIn(doc, bucket, owner, "oss:GetObject") {
		if prefix, ok := strings.CutSuffix(g.object, "/*"); ok {
			out = append(out, Reader{KeyPrefix: prefix, RoleName: g.role})
		}
	}
	SortReaders(out)
	return out
}

// WritersIn is the writers a policy document grants, as Policy writes them: statements that
// Allow exactly oss:PutObject to role sessions on single objects of bucket. Sorted by key, then
// role.
func WritersIn(doc, bucket, owner string) []Writer {
	out := []Writer{}
	for _, g := range grantsIn(doc, bucket, owner, "oss:PutObject") {
		if prefix, _ := strings.CutSuffix(g.object, "/*"); !strings.Contains(prefix, "*") {
			out = append(out, Writer{Key: g.object, RoleName: g.role})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].RoleName < out[j].RoleName
	})
	return out
}

// grant is one role's session allowed one action on object (the resource after "<bucket>/").
type grant struct{ role, object string }

// grantsIn are the grants of statements that Allow exactly action to role sessions on bucket's
// objects; a document that is not JSON grants nothing.
func grantsIn(doc, bucket, owner, action string) []grant {
	var d document
	if json.Unmarshal([]byte(doc), &d) != nil {
		return nil
	}
	var out []grant
	head, tail, resHead := "arn:sts::"+owner+":assumed-role/", "/*", "acs:oss:*:"+owner+":"+bucket+"/"
	for _, st := range d.Statement {
		if st.Effect != "Allow" || len(st.Action) != 1 || st.Action[0] != action {
			continue
		}
		for _, p := range st.Principal {
			role, ok := strings.CutPrefix(p, head)
			if !ok || !strings.HasSuffix(role, tail) {
				continue
			}
			for _, res := range st.Resource {
				if object, ok := strings.CutPrefix(res, resHead); ok {
					out = append(out, grant{role: strings.TrimSuffix(role, tail), object: object})
				}
			}
		}
	}
	return out
}

// SortReaders orders readers by prefix, then role.
func SortReaders(rs []Reader) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].KeyPrefix != rs[j].KeyPrefix {
			return rs[i].KeyPrefix < rs[j].KeyPrefix
		}
		return rs[i].RoleName < rs[j].RoleName
	})
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Spec is a bootstrap bucket as the plan has it.
type Spec struct {
	Name       string
	Encryption string
	Readers    []Reader
	Writers    []Writer // the objects a role may put: join material (Policy)
	Expiries   []Expiry // what OSS deletes after some days: old etcd snapshots
	UserTags   map[string]string
}

// Expiry keeps what is under KeyPrefix for Days: OSS's lifecycle deletes an object Days after it
// was written and each earlier version Days after it was replaced (cloud.PrefixExpiry). For the
// etcd snapshots (issue #34): the bucket is versioned, so a snapshot deleted or overwritten
// before then is still there as a version until then.
type Expiry struct {
	KeyPrefix string
	Days      int
}

// expiryRuleID names the lifecycle rule of a prefix.
func expiryRuleID(prefix string) string { return "gpucluster-expire:" + prefix }

// putExpiries replaces the bucket's lifecycle with spec's expiries (none removes it).
func putExpiries(ctx context.Context, c *cloud.Client, spec Spec) error {
	rules := make([]cloud.PrefixExpiry, 0, len(spec.Expiries))
	for _, e := range spec.Expiries {
		rules = append(rules, cloud.PrefixExpiry{ID: expiryRuleID(e.KeyPrefix), Prefix: e.KeyPrefix + "/", Days: e.Days})
	}
	return c.PutPrefixExpiries(ctx, spec.Name, rules)
}

// expiriesOf reads back what putExpiries put: the rules it names, sorted by prefix.
func expiriesOf(ctx context.Context, c *cloud.Client, name string) ([]Expiry, error) {
	rules, err := c.PrefixExpiries(ctx, name)
	if err != nil {
		return nil, err
	}
	out := []Expiry{}
	for _, r := range rules {
		if prefix, ok := strings.CutSuffix(r.Prefix, "/"); ok && r.ID == expiryRuleID(prefix) {
			out = append(out, Expiry{KeyPrefix: prefix, Days: r.Days})
		}
	}
	return out, nil
}

// Tags are what the bucket carries: the user's and the provider's.
func Tags(name string, user map[string]string) map[string]string {
	return tagging.Merge(user, map[string]string{tagging.ManagedBy: tagging.ManagedByVal, TagKey: name})
}

// Create makes the bucket (or takes over one this account already owns under the name, a retried
// apply's), tags it, brings it to the settings, sets its encryption and then its policy. exists
// reports whether the bucket is there, also when a later step failed.
func Create(ctx context.Context, c *cloud.Client, spec Spec) (state State, exists bool, err error) {
	if err := c.CreateBucket(ctx, cloud.BucketInput{Name: spec.Name, Encrypted: true, Tags: Tags(spec.Name, spec.UserTags)}); err != nil {
		_, findErr := c.FindBucket(ctx, spec.Name)
		return State{}, findErr == nil, err
	}
	if err := c.SetBucketEncryptionAlgorithm(ctx, spec.Name, spec.Encryption); err != nil {
		return State{}, true, err
	}
	if err := Update(ctx, c, spec, false); err != nil {
		return State{}, true, err
	}
	state, err = Read(ctx, c, spec.Name)
	return state, true, err
}

// Update brings the bucket's policy and expiries to spec and, with settings, its ACL, versioning, public
// access block and encryption (changed outside, or a new encryption).
func Update(ctx context.Context, c *cloud.Client, spec Spec, settings bool) error {
	if settings {
		if err := c.ApplyBucketSettings(ctx, spec.Name, true); err != nil {
			return err
		}
		if err := c.SetBucketEncryptionAlgorithm(ctx, spec.Name, spec.Encryption); err != nil {
			return err
		}
	}
	info, err := c.FindBucket(ctx, spec.Name)
	if err != nil {
		return err
	}
	if info.OwnerID == "" {
		return fmt.Errorf("bucket %s: GetBucketInfo named no owner, so the policy cannot name the account's roles", spec.Name)
	}
	if err := putExpiries(ctx, c, spec); err != nil {
		return err
	}
	return c.PutBucketPolicy(ctx, spec.Name, Policy(spec.Name, info.OwnerID, spec.Readers, spec.Writers))
}

// SetTags replaces the bucket's tags.
func SetTags(ctx context.Context, c *cloud.Client, name string, user map[string]string) error {
	return c.SetBucketTags(ctx, name, Tags(name, user))
}

// State is the bucket as OSS has it.
type State struct {
	Settings cloud.Bucket
	// Policy is the policy document, "" without one; Readers are what it grants.
	Policy   string
	Readers  []Reader
	Writers  []Writer
	Expiries []Expiry
}

// Read reads the bucket's settings and policy. A bucket that is gone answers an error matching
// cloud.ErrNotFound.
func Read(ctx context.Context, c *cloud.Client, name string) (State, error) {
	info, err := c.FindBucket(ctx, name)
	if err != nil {
		return State{}, err
	}
	st := State{Settings: *info, Readers: []Reader{}}
	if st.Expiries, err = expiriesOf(ctx, c, name); err != nil {
		return st, err
	}
	doc, err := c.BucketPolicy(ctx, name)
	switch {
	case cloud.IsNotFound(err):
		return st, nil
	case err != nil:
		return st, err
	}
	st.Policy = doc
	st.Readers = ReadersIn(doc, name, info.OwnerID)
	st.Writers = WritersIn(doc, name, info.OwnerID)
	return st, nil
}

// Delete empties the bucket, every version and delete marker, and deletes it; a bucket already
// gone counts as deleted. The bucket only ever holds bundles, which hold secrets: nothing is
// kept.
func Delete(ctx context.Context, c *cloud.Client, name string) error {
	if err := c.EmptyBucket(ctx, name); err != nil {
		if cloud.IsNotFound(err) {
			return nil
		}
		return err
	}
	if err := c.DeleteBucket(ctx, name); err != nil && !cloud.IsNotFound(err) {
		return err
	}
	return nil
}

// CheckWriters says why a prefix writer ("<prefix>/*") could replace bundles: its prefix is a
// reader's, holds one, or lies under one. "" when none could.
func CheckWriters(readers []Reader, writers []Writer) string {
	for _, w := range writers {
		prefix, ok := strings.CutSuffix(w.Key, "/*")
		if !ok {
			continue
		}
		if r, ok := OverlappingReader(readers, prefix); ok {
			return fmt.Sprintf("writer %q of role %q may put under %q, which overlaps reader prefix %q of role %q", w.Key, w.RoleName, prefix, r.KeyPrefix, r.RoleName)
		}
	}
	return ""
}

// OverlappingReader is the first reader whose prefix is prefix, holds it or lies under it ("a"
// holds "a/b", not "ab"): what a role writes or OSS expires there would touch its bundles. ok is
// false when there is none.
func OverlappingReader(readers []Reader, prefix string) (r Reader, ok bool) {
	i := slices.IndexFunc(readers, func(r Reader) bool {
		return prefix == r.KeyPrefix || strings.HasPrefix(r.KeyPrefix, prefix+"/") || strings.HasPrefix(prefix, r.KeyPrefix+"/")
	})
	if i < 0 {
		return Reader{}, false
	}
	return readers[i], true
}

// Overlap is a reader whose prefix covers another role's: Outer's role could read Inner's
// bundles.
type Overlap struct{ Outer, Inner Reader }

// Overlaps is each pair of readers of different roles where one's prefix is the other's or
// holds it ("a" holds "a/b", not "ab").
func Overlaps(readers []Reader) []Overlap {
	var out []Overlap
	for _, o := range readers {
		for _, in := range readers {
			if o.RoleName != in.RoleName && (o.KeyPrefix == in.KeyPrefix && o.RoleName < in.RoleName || strings.HasPrefix(in.KeyPrefix, o.KeyPrefix+"/")) {
				out = append(out, Overlap{Outer: o, Inner: in})
			}
		}
	}
	return out
}
