package oss

import (
	"encoding/base64"
	"encoding/xml"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// ListObjects (V1, marker paging) and ListObjectsV2 (list-type=2,
// continuation tokens), with prefix, delimiter grouping and encoding-type=url.

type contentsXML struct {
	Key          string    `xml:"Key"`
	LastModified string    `xml:"LastModified"`
	ETag         string    `xml:"ETag"`
	Type         string    `xml:"Type"`
	Size         int       `xml:"Size"`
	StorageClass string    `xml:"StorageClass"`
	Owner        *ownerXML `xml:"Owner,omitempty"`
}

type commonPrefixXML struct {
	Prefix string `xml:"Prefix"`
}

type listBucketResultXML struct {
	XMLName               xml.Name          `xml:"ListBucketResult"`
	Name                  string            `xml:"Name"`
	Prefix                string            `xml:"Prefix"`
	Marker                *string           `xml:"Marker,omitempty"`
	StartAfter            string            `xml:"StartAfter,omitempty"`
	ContinuationToken     string            `xml:"ContinuationToken,omitempty"`
	MaxKeys               int               `xml:"MaxKeys"`
	Delimiter             string            `xml:"Delimiter"`
	EncodingType          string            `xml:"EncodingType,omitempty"`
	IsTruncated           bool              `xml:"IsTruncated"`
	NextMarker            string            `xml:"NextMarker,omitempty"`
	NextContinuationToken string            `xml:"NextContinuationToken,omitempty"`
	KeyCount              *int              `xml:"KeyCount,omitempty"`
	Contents              []contentsXML     `xml:"Contents"`
	CommonPrefixes        []commonPrefixXML `xml:"CommonPrefixes"`
}

// listing is one page of keys and common prefixes after `after`.
type listing struct {
	contents    []contentsXML
	prefixes    []commonPrefixXML
	truncated   bool
	lastEmitted string // key or common prefix that ends the page
}

func (c *call) list(prefix, delimiter, after string, maxKeys int, withOwner bool) (listing, *ossError) {
	var out listing
	e := c.withBucket(false, func(b *bucket) *ossError {
		keys := make([]string, 0, len(b.Objects))
		for k := range b.Objects {
			if strings.HasPrefix(k, prefix) && k > after {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		seenPrefix := map[string]bool{}
		for _, k := range keys {
			cp := ""
			if delimiter != "" {
				if i := strings.Index(k[len(prefix):], delimiter); i >= 0 {
					cp = k[:len(prefix)+i+len(delimiter)]
				}
			}
			if cp != "" && seenPrefix[cp] {
				continue
			}
			if len(out.contents)+len(out.prefixes) == maxKeys {
				out.truncated = true
				break
			}
			if cp != "" {
				seenPrefix[cp] = true
				out.prefixes = append(out.prefixes, commonPrefixXML{cp})
				out.lastEmitted = cp
				continue
			}
			o := b.Objects[k]
			entry := contentsXML{Key: k, LastModified: ossTime(o.LastModified), ETag: o.ETag,
				Type: "Normal", Size: len(o.Data), StorageClass: o.StorageClass}
			if withOwner {
				ow := owner()
				entry.Owner = &ow
			}
			out.contents = append(out.contents, entry)
			out.lastEmitted = k
		}
		return nil
	})
	return out, e
}

// A common prefix ends the page with a delimiter; continuing after the
// prefix itself would list its members, so skip past everything under it.
func resumeAfter(last, delimiter string) string {
	if delimiter != "" && strings.HasSuffix(last, delimiter) {
		return last + "\xff"
	}
	return last
}

func encodeKey(s string, enc bool) string {
	if !enc {
		return s
	}
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func (l listing) encode(out *listBucketResultXML, enc bool) {
	for _, cont := range l.contents {
		cont.Key = encodeKey(cont.Key, enc)
		out.Contents = append(out.Contents, cont)
	}
	for _, p := range l.prefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, commonPrefixXML{encodeKey(p.Prefix, enc)})
	}
}

func listParams(c *call) (prefix, delimiter string, maxKeys int, enc bool, e *ossError) {
	q := c.r.URL.Query()
	prefix, delimiter = q.Get("prefix"), q.Get("delimiter")
	if et := q.Get("encoding-type"); et != "" && et != "url" {
		return "", "", 0, false, errInvalidArgument("encoding-type", et, "encoding-type must be url.")
	}
	enc = q.Get("encoding-type") == "url"
	maxKeys, e = parseMaxKeys(q.Get("max-keys"))
	return
}

func listObjects(c *call) *ossError {
	prefix, delimiter, maxKeys, enc, e := listParams(c)
	if e != nil {
		return e
	}
	marker := c.r.URL.Query().Get("marker")
	l, e := c.list(prefix, delimiter, resumeAfter(marker, delimiter), maxKeys, true)
	if e != nil {
		return e
	}
	encMarker := encodeKey(marker, enc)
	out := listBucketResultXML{Name: c.bucket, Prefix: encodeKey(prefix, enc), Marker: &encMarker,
		MaxKeys: maxKeys, Delimiter: encodeKey(delimiter, enc), IsTruncated: l.truncated}
	if enc {
		out.EncodingType = "url"
	}
	if l.truncated {
		out.NextMarker = encodeKey(l.lastEmitted, enc)
	}
	l.encode(&out, enc)
	return c.writeXML(out)
}

func listObjectsV2(c *call) *ossError {
	prefix, delimiter, maxKeys, enc, e := listParams(c)
	if e != nil {
		return e
	}
	q := c.r.URL.Query()
	startAfter, token := q.Get("start-after"), q.Get("continuation-token")
	after := startAfter
	if token != "" {
		// Tokens are opaque to clients; here they are the base64 of the last
		// key or prefix of the previous page.
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return errInvalidArgument("continuation-token", token, "The continuation token is not valid.")
		}
		after = string(raw)
	}
	fetchOwner, _ := strconv.ParseBool(q.Get("fetch-owner"))
	l, e := c.list(prefix, delimiter, resumeAfter(after, delimiter), maxKeys, fetchOwner)
	if e != nil {
		return e
	}
	count := len(l.contents) + len(l.prefixes)
	out := listBucketResultXML{Name: c.bucket, Prefix: encodeKey(prefix, enc),
		StartAfter: encodeKey(startAfter, enc), ContinuationToken: token, MaxKeys: maxKeys,
		Delimiter: encodeKey(delimiter, enc), IsTruncated: l.truncated, KeyCount: &count}
	if enc {
		out.EncodingType = "url"
	}
	if l.truncated {
		out.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(l.lastEmitted))
	}
	l.encode(&out, enc)
	return c.writeXML(out)
}
