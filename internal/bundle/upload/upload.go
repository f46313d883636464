// Package upload puts a node pool's bootstrap bundle (package bundle) in its OSS bucket and takes
// it away again: the workflow between bootstrap.Render's document and the stub the nodes run.
// package bundle stays pure; this package is the one that talks to OSS, through Store (the
// provider's *cloud.Client).
//
// The order, for each apply of a pool:
//
//  1. Prepare: the document becomes a bundle (bundle.FromCloudInit), packed (bundle.Pack), at the
//     key named by its digest, <prefix>/<hex>.tar.gz, and the stub that fetches it (bundle.Stub).
//     Nothing is sent yet; the stub is the user data.
//  2. Upload, before RunInstances (or before the scaling configuration names the stub): an object
//     already at the key with the bundle's MD5 is left as it is, so a retried apply uploads once.
//  3. Prune, after the apply: every other key under the prefix goes, each version of it, but those
//     a node of the pool still names in its user data. When the pool goes: every key under it.
//
// The prefix is the pool's own: Prune and Delete remove whatever is under it.
package upload

import (
	"context"
	"crypto/md5" //nolint:gosec // OSS's ETag of a simple upload is the MD5 of the body, not a security check
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// ContentType is the bundle object's Content-Type.
const ContentType = "application/gzip"

// Store is what the workflow needs of OSS; *cloud.Client is one.
type Store interface {
	HeadObject(ctx context.Context, bucket, key string) (*cloud.ObjectInfo, error)
	PutObject(ctx context.Context, bucket, key string, body []byte, contentType string) error
	ObjectKeysUnder(ctx context.Context, bucket, prefix string) ([]string, error)
	DeleteObjectsUnder(ctx context.Context, bucket, prefix string, del func(key string) bool) error
}

// Location is where a pool's bundles go and who reads them.
type Location struct {
	// Region is the bucket's and the nodes' region.
	Region string
	// Bucket and Prefix: the pool's bundles are <Prefix>/<digest hex>.tar.gz in Bucket. Prefix
	// has no leading or trailing "/".
	Bucket, Prefix string
	// RoleName is the instance RAM role the nodes fetch with.
	RoleName string
}

// Prepared is one bundle ready to upload, and the stub that fetches it.
type Prepared struct {
	// Key is <Prefix>/<digest hex>.tar.gz.
	Bucket, Prefix, Key, Digest string
	Archive                     []byte
	// Stub is the provider's part of the user data (bundle.Stub), before the user's are merged.
	Stub string
}

// KeyFor is the object key of a bundle with this digest under prefix.
func KeyFor(prefix, digest string) string {
	return prefix + "/" + strings.TrimPrefix(digest, bundle.DigestPrefix) + ".tar.gz"
}

// Prepare maps the provider's own #cloud-config document (before bootstrap.Merge) to a bundle,
// packs it and renders the stub that fetches it from loc. The same document gives the same
// key, digest and stub.
func Prepare(doc string, loc Location) (Prepared, error) {
	files, err := bundle.FromCloudInit(doc)
	if err != nil {
		return Prepared{}, fmt.Errorf("bootstrap bundle: %w", err)
	}
	archive, digest, err := bundle.Pack(files)
	if err != nil {
		return Prepared{}, fmt.Errorf("bootstrap bundle: %w", err)
	}
	p := Prepared{Bucket: loc.Bucket, Prefix: loc.Prefix, Key: KeyFor(loc.Prefix, digest), Digest: digest, Archive: archive}
	p.Stub, err = bundle.Stub(bundle.StubSpec{Region: loc.Region, Bucket: p.Bucket, Key: p.Key, Digest: digest, RoleName: loc.RoleName})
	if err != nil {
		return Prepared{}, err
	}
	return p, nil
}

// Upload puts the bundle at its key unless the object there already holds these bytes: OSS's
// ETag of an object made by PutObject is the MD5 of its content, in upper-case hex
// (https://www.alibabacloud.com/help/en/oss/user-guide/etags-of-objects). Any other object at
// the key (a different ETag, such as a multipart upload's) is overwritten.
func Upload(ctx context.Context, s Store, p Prepared) error {
	info, err := s.HeadObject(ctx, p.Bucket, p.Key)
	switch {
	case err == nil && strings.EqualFold(info.ETag, md5Hex(p.Archive)):
		return nil
	case err != nil && !errors.Is(err, cloud.ErrNotFound):
		return fmt.Errorf("bootstrap bundle: %w", err)
	}
	if err := s.PutObject(ctx, p.Bucket, p.Key, p.Archive, ContentType); err != nil {
		return fmt.Errorf("bootstrap bundle: %w", err)
	}
	return nil
}

// Prune deletes the bundles under prefix (each version of them) but keep and those inUse names:
// what a pool keeps after an apply. inUse is asked only when there is something to delete; it
// answers the user data of the pool's instances, whose stubs may name older bundles (a node made
// before a change that did not replace it). With keep "" and inUse nil it deletes every bundle
// under prefix (the pool's Delete).
func Prune(ctx context.Context, s Store, bucket, prefix, keep string, inUse func(context.Context) ([]string, error)) error {
	keys, err := s.ObjectKeysUnder(ctx, bucket, prefix+"/")
	if err != nil {
		return fmt.Errorf("bootstrap bundle: %w", err)
	}
	stale := map[string]bool{}
	for _, k := range keys {
		if k != keep {
			stale[k] = true
		}
	}
	if len(stale) == 0 {
		return nil
	}
	if inUse != nil {
		userData, err := inUse(ctx)
		if err != nil {
			return fmt.Errorf("bootstrap bundle: the bundles the pool's nodes use: %w", err)
		}
		for _, ud := range userData {
			for _, k := range NamedIn(ud, prefix) {
				delete(stale, k)
			}
		}
	}
	err = s.DeleteObjectsUnder(ctx, bucket, prefix+"/", func(key string) bool { return stale[key] })
	if err != nil {
		return fmt.Errorf("bootstrap bundle: %w", err)
	}
	return nil
}

// NamedIn is the bundle keys under prefix that a node's user data (as ECS holds it, packed or
// not) names.
func NamedIn(userData, prefix string) []string {
	doc, err := bootstrap.UnpackUserData(userData)
	if err != nil {
		doc = userData
	}
	re := regexp.MustCompile(regexp.QuoteMeta(prefix+"/") + `[0-9a-f]{64}\.tar\.gz`)
	return re.FindAllString(doc, -1)
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b) //nolint:gosec // see the import
	return hex.EncodeToString(sum[:])
}
