package oss

import (
	"encoding/xml"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	sdk "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// ACL values. "default" is only valid on objects (inherit the bucket's).
const (
	aclPrivate         = "private"
	aclPublicRead      = "public-read"
	aclPublicReadWrite = "public-read-write"
	aclDefault         = "default"
)

// OwnerID: the emulator is a single account (core.AccountID); OSS shows its numeric id as the
// owner of every bucket.
const OwnerID = "1000000000000000"

// bucket is one bucket's state. Exported fields are what MarshalState
// persists; the lifecycle and encryption rules use the SDK's own structs so
// the emulator stores and returns exactly the shape the client sends.
type bucket struct {
	Name              string                                  `json:"name"`
	Region            string                                  `json:"region"`
	Created           time.Time                               `json:"created"`
	ACL               string                                  `json:"acl"`
	StorageClass      string                                  `json:"storage_class"`
	Redundancy        string                                  `json:"data_redundancy_type"`
	Versioning        string                                  `json:"versioning,omitempty"` // "", Enabled, Suspended
	Encryption        *sdk.ApplyServerSideEncryptionByDefault `json:"encryption,omitempty"`
	Lifecycle         []sdk.LifecycleRule                     `json:"lifecycle,omitempty"`
	BlockPublicAccess bool                                    `json:"block_public_access"`
	Objects           map[string]*object                      `json:"objects"`
	// Versions: older versions and delete markers per key, newest first (versions.go).
	Versions map[string][]*object `json:"versions,omitempty"`
	// Tags: the bucket's tags (PutBucketTags), see tagging.go.
	Tags map[string]string `json:"tags,omitempty"`
	// Policy: the bucket policy as PutBucketPolicy took it, "" for none (policy.go).
	Policy string `json:"policy,omitempty"`
}

// validBucketName applies OSS's rules: 3-63 characters of lowercase letters,
// digits and hyphens, not starting or ending with a hyphen.
func validBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' {
		return false
	}
	for _, ch := range name {
		if !('a' <= ch && ch <= 'z' || '0' <= ch && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}

func errInvalidBucketName(name string) *ossError {
	e := newError(http.StatusBadRequest, "InvalidBucketName", "The specified bucket is not valid.")
	e.bucketName = name
	return e
}

// withBucket runs fn on the request's bucket under the handler's lock (the
// write lock when write is set), after checking the name and existence.
func (c *call) withBucket(write bool, fn func(b *bucket) *ossError) *ossError {
	if !validBucketName(c.bucket) {
		return errInvalidBucketName(c.bucket)
	}
	if write {
		c.h.mu.Lock()
		defer c.h.mu.Unlock()
	} else {
		c.h.mu.RLock()
		defer c.h.mu.RUnlock()
	}
	b, ok := c.h.buckets[c.bucket]
	if !ok {
		return errNoSuchBucket(c.bucket)
	}
	return fn(b)
}

func validACL(acl string) bool {
	return acl == aclPrivate || acl == aclPublicRead || acl == aclPublicReadWrite
}

func validBucketStorageClass(sc string) bool {
	switch sc {
	case "Standard", "IA", "Archive", "ColdArchive":
		return true
	}
	return false
}

func putBucket(c *call) *ossError {
	if !validBucketName(c.bucket) {
		return errInvalidBucketName(c.bucket)
	}
	acl := c.r.Header.Get("x-oss-acl")
	if acl == "" {
		acl = aclPrivate
	}
	if !validACL(acl) {
		return errInvalidArgument("x-oss-acl", acl, "no such bucket access control exists")
	}
	cfg := sdk.CreateBucketConfiguration{}
	body, e := c.readBody(maxXMLBody)
	if e != nil {
		return e
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if e := decodeXML(body, "CreateBucketConfiguration", &cfg); e != nil {
			return e
		}
	}
	sc := string(cfg.StorageClass)
	if sc == "" {
		sc = "Standard"
	}
	if !validBucketStorageClass(sc) {
		return errInvalidArgument("StorageClass", sc, "Invalid storage class %q: use Standard, IA, Archive or ColdArchive.", sc)
	}
	red := string(cfg.DataRedundancyType)
	if red == "" {
		red = "LRS"
	}
	if red != "LRS" && red != "ZRS" {
		return errInvalidArgument("DataRedundancyType", red, "Invalid data redundancy type %q: use LRS or ZRS.", red)
	}

	c.h.mu.Lock()
	if _, exists := c.h.buckets[c.bucket]; exists {
		c.h.mu.Unlock()
		e := newError(http.StatusConflict, "BucketAlreadyExists",
			"The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.")
		e.bucketName = c.bucket
		return e
	}
	c.h.buckets[c.bucket] = &bucket{
		Name:         c.bucket,
		Region:       c.region,
		Created:      c.h.now().UTC().Truncate(time.Second),
		ACL:          acl,
		StorageClass: sc,
		Redundancy:   red,
		Objects:      map[string]*object{},
	}
	c.h.mu.Unlock()
	c.w.Header().Set("Location", "/"+c.bucket)
	return c.writeEmpty(http.StatusOK)
}

func deleteBucket(c *call) *ossError {
	if !validBucketName(c.bucket) {
		return errInvalidBucketName(c.bucket)
	}
	c.h.mu.Lock()
	b, ok := c.h.buckets[c.bucket]
	switch {
	case !ok:
		c.h.mu.Unlock()
		return errNoSuchBucket(c.bucket)
	case b.versionCount() > 0:
		c.h.mu.Unlock()
		e := newError(http.StatusConflict, "BucketNotEmpty", "The bucket you tried to delete is not empty.")
		e.bucketName = c.bucket
		return e
	}
	delete(c.h.buckets, c.bucket)
	c.h.mu.Unlock()
	return c.writeEmpty(http.StatusNoContent)
}

// Response documents. Element names and order follow OSS's API reference;
// the SDK's result structs (GetBucketInfoResult, ListBucketsResult, ...)
// decode them in the tests.

type ownerXML struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

func owner() ownerXML { return ownerXML{ID: OwnerID, DisplayName: OwnerID} }

type sseRuleXML struct {
	SSEAlgorithm      string `xml:"SSEAlgorithm"`
	KMSMasterKeyID    string `xml:"KMSMasterKeyID,omitempty"`
	KMSDataEncryption string `xml:"KMSDataEncryption,omitempty"`
}

type bucketInfoXML struct {
	XMLName xml.Name `xml:"BucketInfo"`
	Bucket  struct {
		AccessMonitor          string     `xml:"AccessMonitor"`
		CreationDate           string     `xml:"CreationDate"`
		ExtranetEndpoint       string     `xml:"ExtranetEndpoint"`
		IntranetEndpoint       string     `xml:"IntranetEndpoint"`
		Location               string     `xml:"Location"`
		StorageClass           string     `xml:"StorageClass"`
		TransferAcceleration   string     `xml:"TransferAcceleration"`
		CrossRegionReplication string     `xml:"CrossRegionReplication"`
		DataRedundancyType     string     `xml:"DataRedundancyType"`
		Name                   string     `xml:"Name"`
		ResourceGroupID        string     `xml:"ResourceGroupId"`
		Owner                  ownerXML   `xml:"Owner"`
		ACL                    string     `xml:"AccessControlList>Grant"`
		SSERule                sseRuleXML `xml:"ServerSideEncryptionRule"`
		BucketPolicy           struct {
			LogBucket string `xml:"LogBucket"`
			LogPrefix string `xml:"LogPrefix"`
		} `xml:"BucketPolicy"`
		Versioning        string `xml:"Versioning,omitempty"`
		BlockPublicAccess bool   `xml:"BlockPublicAccess"`
	} `xml:"Bucket"`
}

// ossTime is the timestamp format OSS uses in XML bodies.
func ossTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func location(region string) string { return "oss-" + region }

func getBucketInfo(c *call) *ossError {
	var out bucketInfoXML
	if e := c.withBucket(false, func(b *bucket) *ossError {
		info := &out.Bucket
		info.AccessMonitor = "Disabled"
		info.CreationDate = ossTime(b.Created)
		info.ExtranetEndpoint = location(b.Region) + ".aliyuncs.com"
		info.IntranetEndpoint = location(b.Region) + "-internal.aliyuncs.com"
		info.Location = location(b.Region)
		info.StorageClass = b.StorageClass
		info.TransferAcceleration = "Disabled"
		info.CrossRegionReplication = "Disabled"
		info.DataRedundancyType = b.Redundancy
		info.Name = b.Name
		info.Owner = owner()
		info.ACL = b.ACL
		// OSS reports "None" when no default encryption is set; the SDK
		// turns that into "".
		info.SSERule.SSEAlgorithm = "None"
		if enc := b.Encryption; enc != nil {
			info.SSERule.SSEAlgorithm = deref(enc.SSEAlgorithm)
			info.SSERule.KMSMasterKeyID = deref(enc.KMSMasterKeyID)
			info.SSERule.KMSDataEncryption = deref(enc.KMSDataEncryption)
		}
		info.Versioning = b.Versioning
		info.BlockPublicAccess = b.BlockPublicAccess
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(out)
}

func getBucketLocation(c *call) *ossError {
	var loc string
	if e := c.withBucket(false, func(b *bucket) *ossError {
		loc = location(b.Region)
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(struct {
		XMLName xml.Name `xml:"LocationConstraint"`
		Value   string   `xml:",chardata"`
	}{Value: loc})
}

type listBucketsXML struct {
	XMLName     xml.Name         `xml:"ListAllMyBucketsResult"`
	Prefix      string           `xml:"Prefix,omitempty"`
	Marker      string           `xml:"Marker,omitempty"`
	MaxKeys     int              `xml:"MaxKeys,omitempty"`
	IsTruncated bool             `xml:"IsTruncated"`
	NextMarker  string           `xml:"NextMarker,omitempty"`
	Owner       ownerXML         `xml:"Owner"`
	Buckets     []bucketEntryXML `xml:"Buckets>Bucket"`
}

type bucketEntryXML struct {
	CreationDate     string `xml:"CreationDate"`
	ExtranetEndpoint string `xml:"ExtranetEndpoint"`
	IntranetEndpoint string `xml:"IntranetEndpoint"`
	Location         string `xml:"Location"`
	Name             string `xml:"Name"`
	Region           string `xml:"Region"`
	StorageClass     string `xml:"StorageClass"`
}

// parseMaxKeys reads max-keys: default 100, 1..1000 like OSS.
func parseMaxKeys(raw string) (int, *ossError) {
	if raw == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > 1000 {
		return 0, errInvalidArgument("max-keys", raw, "max-keys must be between 1 and 1000.")
	}
	return n, nil
}

func listBuckets(c *call) *ossError {
	q := c.r.URL.Query()
	prefix, marker := q.Get("prefix"), q.Get("marker")
	maxKeys, e := parseMaxKeys(q.Get("max-keys"))
	if e != nil {
		return e
	}
	out := listBucketsXML{Prefix: prefix, Marker: marker, Owner: owner()}
	if q.Has("max-keys") {
		out.MaxKeys = maxKeys
	}
	c.h.mu.RLock()
	names := make([]string, 0, len(c.h.buckets))
	for name := range c.h.buckets {
		if strings.HasPrefix(name, prefix) && name > marker {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) > maxKeys {
		names = names[:maxKeys]
		out.IsTruncated = true
		out.NextMarker = names[maxKeys-1]
	}
	for _, name := range names {
		b := c.h.buckets[name]
		out.Buckets = append(out.Buckets, bucketEntryXML{ossTime(b.Created), location(b.Region) + ".aliyuncs.com", location(b.Region) + "-internal.aliyuncs.com",
			location(b.Region), b.Name, b.Region, b.StorageClass})
	}
	c.h.mu.RUnlock()
	return c.writeXML(out)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
