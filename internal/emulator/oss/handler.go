// Package oss is the Object Storage Service half of the offline Alibaba Cloud
// emulator. It speaks OSS's REST + XML protocol in path style (/bucket/ and
// /bucket/key), checks signature V4 (OSS4-HMAC-SHA256, the v2 SDK's default)
// and V1, and keeps buckets and objects in memory so the provider's OSS code
// can be tested through the real SDK without a network.
package oss

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config wires the handler into the emulator.
type Config struct {
	// Credentials answers what the emulator knows of an access key id (its
	// static key and any STS temporary keys). nil means no key is known, so
	// every signed request fails with InvalidAccessKeyId.
	Credentials func(accessKeyID string) (Key, bool)
	// Now is the clock; nil means time.Now. Tests freeze it.
	Now func() time.Time
}

// Key is an access key as OSS sees it.
type Key struct {
	Secret string
	// Token and Expires are a temporary (STS) key's security token and expiry; "" and zero for a
	// long-term key, which is the account's: the owner of every bucket.
	Token   string
	Expires time.Time
	// Principal names a temporary key's holder as a bucket policy does,
	// arn:sts::<account>:assumed-role/<role>/<session>; "" for a long-term key.
	Principal string
}

// Handler serves the OSS API. It is safe for concurrent use.
type Handler struct {
	cfg Config

	mu      sync.RWMutex
	buckets map[string]*bucket

	observer atomic.Pointer[func(action, errorCode string)]
}

// NewHandler returns an empty OSS service.
func NewHandler(cfg Config) *Handler {
	return &Handler{cfg: cfg, buckets: map[string]*bucket{}}
}

// SetObserver registers fn to be called once per request with the OSS
// operation name and "" or the error code. nil removes it.
func (h *Handler) SetObserver(fn func(action, errorCode string)) {
	if fn == nil {
		h.observer.Store(nil)
		return
	}
	h.observer.Store(&fn)
}

func (h *Handler) now() time.Time {
	if h.cfg.Now != nil {
		return h.cfg.Now()
	}
	return time.Now()
}

// call is the state of one request as it passes routing, authentication and
// the operation.
type call struct {
	h         *Handler
	w         http.ResponseWriter
	r         *http.Request
	requestID string

	bucket string // "" for service-level requests (ListBuckets)
	key    string // "" for bucket-level requests
	hasKey bool

	// Filled by authentication.
	anonymous bool
	region    string
	caller    Key // the key the request is signed with

	errCode string // set by writeError, reported to the observer
}

// operation is a routed request: the OSS action name (what /_emulator/stats
// counts) and the function that does it.
type operation struct {
	name string
	run  func(c *call) *ossError
	// public operations may be called anonymously when the bucket ACL allows;
	// see authorizeAnonymous.
	public bool
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r, requestID: newRequestID()}
	hdr := w.Header()
	hdr.Set("x-oss-request-id", c.requestID)
	hdr.Set("Server", "AliyunOSS")
	hdr.Set("Date", h.now().UTC().Format(http.TimeFormat))

	op := c.route()
	if err := c.authenticate(op); err != nil {
		c.writeError(err)
	} else if err := c.authorize(op); err != nil {
		c.writeError(err)
	} else if err := op.run(c); err != nil {
		c.writeError(err)
	}
	if fn := h.observer.Load(); fn != nil {
		(*fn)(op.name, c.errCode)
	}
}

// route splits the path into bucket and key and picks the operation from the
// method and the sub-resource in the query string, as OSS does.
func (c *call) route() operation {
	p := strings.TrimPrefix(c.r.URL.Path, "/")
	if p != "" {
		bucket, key, found := strings.Cut(p, "/")
		c.bucket = bucket
		c.key = key
		c.hasKey = found && key != ""
	}
	q := c.r.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	m := c.r.Method

	if c.bucket == "" {
		if m == http.MethodGet {
			return operation{name: "ListBuckets", run: listBuckets}
		}
		return notImplemented("Service" + m)
	}

	if c.hasKey {
		for k := range q {
			if unsupportedObjectSubresources[k] {
				return notImplemented(k)
			}
		}
		switch {
		case m == http.MethodHead && has("objectMeta"):
			return operation{name: "GetObjectMeta", run: getObject, public: true}
		case m == http.MethodPut && c.r.Header.Get("x-oss-copy-source") != "":
			return notImplemented("CopyObject")
		case m == http.MethodPut:
			return operation{name: "PutObject", run: putObject, public: true}
		case m == http.MethodGet:
			return operation{name: "GetObject", run: getObject, public: true}
		case m == http.MethodHead:
			return operation{name: "HeadObject", run: getObject, public: true}
		case m == http.MethodDelete:
			return operation{name: "DeleteObject", run: deleteObject, public: true}
		}
		return notImplemented("Object" + m)
	}

	type route struct {
		sub, method, name string
		run               func(*call) *ossError
	}
	routes := []route{
		{"bucketInfo", http.MethodGet, "GetBucketInfo", getBucketInfo},
		{"location", http.MethodGet, "GetBucketLocation", getBucketLocation},
		{"lifecycle", http.MethodPut, "PutBucketLifecycle", putBucketLifecycle},
		{"lifecycle", http.MethodGet, "GetBucketLifecycle", getBucketLifecycle},
		{"lifecycle", http.MethodDelete, "DeleteBucketLifecycle", deleteBucketLifecycle},
		{"encryption", http.MethodPut, "PutBucketEncryption", putBucketEncryption},
		{"encryption", http.MethodGet, "GetBucketEncryption", getBucketEncryption},
		{"encryption", http.MethodDelete, "DeleteBucketEncryption", deleteBucketEncryption},
		{"versioning", http.MethodPut, "PutBucketVersioning", putBucketVersioning},
		{"versioning", http.MethodGet, "GetBucketVersioning", getBucketVersioning},
		{"acl", http.MethodPut, "PutBucketAcl", putBucketACL},
		{"acl", http.MethodGet, "GetBucketAcl", getBucketACL},
		{"publicAccessBlock", http.MethodPut, "PutBucketPublicAccessBlock", putBucketPublicAccessBlock},
		{"publicAccessBlock", http.MethodGet, "GetBucketPublicAccessBlock", getBucketPublicAccessBlock},
		{"publicAccessBlock", http.MethodDelete, "DeleteBucketPublicAccessBlock", deleteBucketPublicAccessBlock},
		{"tagging", http.MethodPut, "PutBucketTags", putBucketTags},
		{"tagging", http.MethodGet, "GetBucketTags", getBucketTags},
		{"tagging", http.MethodDelete, "DeleteBucketTags", deleteBucketTags},
		{"versions", http.MethodGet, "ListObjectVersions", listObjectVersions},
		{"policy", http.MethodPut, "PutBucketPolicy", putBucketPolicy},
		{"policy", http.MethodGet, "GetBucketPolicy", getBucketPolicy},
		{"policy", http.MethodDelete, "DeleteBucketPolicy", deleteBucketPolicy},
	}
	for _, rt := range routes {
		if has(rt.sub) {
			if rt.method == m {
				return operation{name: rt.name, run: rt.run}
			}
		}
	}
	for k := range q {
		if knownBucketSubresources[k] {
			return notImplemented(k)
		}
	}
	switch m {
	case http.MethodPut:
		return operation{name: "PutBucket", run: putBucket}
	case http.MethodDelete:
		return operation{name: "DeleteBucket", run: deleteBucket}
	case http.MethodGet:
		if q.Get("list-type") == "2" {
			return operation{name: "ListObjectsV2", run: listObjectsV2}
		}
		return operation{name: "ListObjects", run: listObjects}
	}
	return notImplemented("Bucket" + m)
}

// notImplemented answers requests the emulator does not model with a clear
// error instead of pretending success; the action name says what was asked.
func notImplemented(what string) operation {
	return operation{name: "Unsupported", run: func(c *call) *ossError {
		return newError(http.StatusNotImplemented, "NotImplemented",
			"The gpucluster emulator does not implement this OSS operation (%s).", what)
	}}
}

// Sub-resources OSS knows on buckets and objects. A request naming one the
// emulator does not serve gets NotImplemented rather than being mistaken for
// a plain PutBucket, GetObject and so on.
var knownBucketSubresources = setOf("bucketInfo", "location", "lifecycle", "encryption",
	"versioning", "acl", "publicAccessBlock", "stat", "cors", "logging", "website",
	"referer", "policy", "tagging", "worm", "replication", "inventory", "uploads",
	"versions", "delete", "transferAcceleration", "requestPayment", "resourceGroup",
	"accessMonitor", "httpsConfig", "style", "qos", "cname", "metaQuery", "objectWorm",
	"overwriteConfig", "archiveDirectRead", "policyStatus", "redundancyTransition")

var unsupportedObjectSubresources = setOf("acl", "tagging", "symlink", "restore",
	"uploads", "uploadId", "append", "x-oss-process", "cleanRestoredObject", "seal",
	"retention", "legalHold", "select", "selectMeta")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// newRequestID makes a 24-hex-digit id like the ones OSS returns.
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}
