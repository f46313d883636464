package oss

import (
	"encoding/xml"
	"net/http"
	"sort"
	"strings"

	sdk "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// Bucket tagging (PUT/GET/DELETE /?tagging). PutBucketTags replaces the whole
// tag set; DeleteBucketTags removes every tag, or with tagging=k1,k2 only
// those keys.

// Limits OSS documents for bucket tags.
const (
	maxBucketTags      = 20
	maxBucketTagKey    = 64
	maxBucketTagValue  = 128
	bucketTagErrorCode = "InvalidTag"
)

func checkBucketTag(k, v string) *ossError {
	lk := strings.ToLower(k)
	switch {
	case k == "":
		return newError(http.StatusBadRequest, bucketTagErrorCode, "A tag key must not be empty.")
	case len(k) > maxBucketTagKey:
		return newError(http.StatusBadRequest, bucketTagErrorCode, "Tag key %q is longer than %d bytes.", k, maxBucketTagKey)
	case strings.HasPrefix(lk, "http://") || strings.HasPrefix(lk, "https://") || strings.HasPrefix(lk, "aliyun"):
		return newError(http.StatusBadRequest, bucketTagErrorCode, "Tag key %q must not start with http://, https:// or Aliyun.", k)
	case len(v) > maxBucketTagValue:
		return newError(http.StatusBadRequest, bucketTagErrorCode, "The value of tag %q is longer than %d bytes.", k, maxBucketTagValue)
	}
	return nil
}

func putBucketTags(c *call) *ossError {
	var in sdk.Tagging
	if e := c.readXML("Tagging", &in); e != nil {
		return e
	}
	tags := map[string]string{}
	if in.TagSet != nil {
		for _, t := range in.TagSet.Tags {
			k, v := deref(t.Key), deref(t.Value)
			if e := checkBucketTag(k, v); e != nil {
				return e
			}
			if _, dup := tags[k]; dup {
				return newError(http.StatusBadRequest, bucketTagErrorCode, "Tag key %q appears more than once.", k)
			}
			tags[k] = v
		}
	}
	if len(tags) > maxBucketTags {
		return newError(http.StatusBadRequest, bucketTagErrorCode, "%d tags given; a bucket takes at most %d.", len(tags), maxBucketTags)
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Tags = tags
		if len(tags) == 0 {
			b.Tags = nil
		}
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusOK)
}

type taggingXML struct {
	XMLName xml.Name `xml:"Tagging"`
	TagSet  struct {
		Tags []tagXML `xml:"Tag"`
	} `xml:"TagSet"`
}

type tagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// getBucketTags answers an untagged bucket with an empty TagSet, as OSS does.
func getBucketTags(c *call) *ossError {
	var out taggingXML
	if e := c.withBucket(false, func(b *bucket) *ossError {
		for _, k := range sortedKeys(b.Tags) {
			out.TagSet.Tags = append(out.TagSet.Tags, tagXML{Key: k, Value: b.Tags[k]})
		}
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(out)
}

func deleteBucketTags(c *call) *ossError {
	var keys []string
	if v := c.r.URL.Query().Get("tagging"); v != "" {
		keys = strings.Split(v, ",")
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		if keys == nil {
			b.Tags = nil
			return nil
		}
		for _, k := range keys {
			delete(b.Tags, k)
		}
		if len(b.Tags) == 0 {
			b.Tags = nil
		}
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusNoContent)
}

// tagMap is a copy of the bucket's tags for /_emulator/resources (never nil).
func (b *bucket) tagMap() map[string]string {
	out := make(map[string]string, len(b.Tags))
	for k, v := range b.Tags {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
