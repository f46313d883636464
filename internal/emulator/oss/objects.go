package oss

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"hash/crc64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// object is one stored object. Data is never modified after a put (a new
// put replaces the whole object), so readers may use it after dropping the
// lock.
type object struct {
	Data               []byte            `json:"data"`
	ContentType        string            `json:"content_type"`
	CacheControl       string            `json:"cache_control,omitempty"`
	ContentDisposition string            `json:"content_disposition,omitempty"`
	ContentEncoding    string            `json:"content_encoding,omitempty"`
	ETag               string            `json:"etag"`
	ContentMD5         string            `json:"content_md5"`
	CRC64              uint64            `json:"crc64"`
	LastModified       time.Time         `json:"last_modified"`
	StorageClass       string            `json:"storage_class"`
	ACL                string            `json:"acl"`
	Meta               map[string]string `json:"meta,omitempty"`
	VersionID          string            `json:"version_id,omitempty"`
	// DeleteMarker: this version is a delete marker (no data), see versions.go.
	DeleteMarker bool `json:"delete_marker,omitempty"`
	// SSE and SSEKeyID: the server-side encryption it was stored with, see sse.go.
	SSE      string `json:"sse,omitempty"`
	SSEKeyID string `json:"sse_key_id,omitempty"`
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// validObjectName: 1-1023 bytes, not starting with / or \ (OSS's rule).
func validObjectName(key string) bool {
	return len(key) >= 1 && len(key) <= 1023 && key[0] != '/' && key[0] != '\\'
}

func validObjectStorageClass(sc string) bool {
	switch sc {
	case "Standard", "IA", "Archive", "ColdArchive", "DeepColdArchive":
		return true
	}
	return false
}

func putObject(c *call) *ossError {
	if !validObjectName(c.key) {
		e := newError(http.StatusBadRequest, "InvalidObjectName", "The specified object is not valid.")
		e.key = c.key
		return e
	}
	hdr := c.r.Header
	acl := hdr.Get("x-oss-object-acl")
	if acl == "" {
		acl = aclDefault
	}
	if acl != aclDefault && !validACL(acl) {
		return errInvalidArgument("x-oss-object-acl", acl, "no such object access control exists")
	}
	sc := hdr.Get("x-oss-storage-class")
	if sc != "" && !validObjectStorageClass(sc) {
		return errInvalidArgument("x-oss-storage-class", sc, "Invalid storage class %q.", sc)
	}
	sseAlg, sseKeyID, e := requestedSSE(hdr)
	if e != nil {
		return e
	}
	data, e := c.readBody(maxObjectBody)
	if e != nil {
		return e
	}
	md5sum := md5.Sum(data)
	o := &object{
		Data:               data,
		ContentType:        hdr.Get("Content-Type"),
		CacheControl:       hdr.Get("Cache-Control"),
		ContentDisposition: hdr.Get("Content-Disposition"),
		ContentEncoding:    hdr.Get("Content-Encoding"),
		ETag:               `"` + strings.ToUpper(hex.EncodeToString(md5sum[:])) + `"`,
		ContentMD5:         base64.StdEncoding.EncodeToString(md5sum[:]),
		CRC64:              crc64.Checksum(data, crcTable),
		LastModified:       c.h.now().UTC().Truncate(time.Second),
		ACL:                acl,
		Meta:               map[string]string{},
	}
	if o.ContentType == "" {
		o.ContentType = "application/octet-stream"
	}
	for k, v := range hdr {
		if low := strings.ToLower(k); strings.HasPrefix(low, "x-oss-meta-") {
			o.Meta[low] = strings.Join(v, ",")
		}
	}
	forbidOverwrite := strings.EqualFold(hdr.Get("x-oss-forbid-overwrite"), "true")
	if e := c.withBucket(true, func(b *bucket) *ossError {
		if _, exists := b.Objects[c.key]; exists && forbidOverwrite {
			e := newError(http.StatusConflict, "FileAlreadyExists", "The object you specified already exists and can not be overwritten.")
			e.key = c.key
			return e
		}
		if o.StorageClass = sc; sc == "" {
			o.StorageClass = b.StorageClass
		}
		o.applySSE(b, sseAlg, sseKeyID)
		b.putVersion(c.key, o)
		return nil
	}); e != nil {
		return e
	}
	h := c.w.Header()
	h.Set("ETag", o.ETag)
	h.Set("Content-MD5", o.ContentMD5)
	h.Set("x-oss-hash-crc64ecma", strconv.FormatUint(o.CRC64, 10))
	if o.VersionID != "" {
		h.Set("x-oss-version-id", o.VersionID)
	}
	o.setSSEHeaders(h)
	return c.writeEmpty(http.StatusOK)
}

// getObject serves GetObject, HeadObject and GetObjectMeta. http.ServeContent
// gives Range and conditional requests (If-Match, If-None-Match,
// If-Modified-Since) their standard behaviour.
func getObject(c *call) *ossError {
	var o *object
	q := c.r.URL.Query()
	if e := c.withBucket(false, func(b *bucket) *ossError {
		if q.Has("versionId") {
			o = b.findVersion(c.key, q.Get("versionId"))
			if o == nil {
				return errNoSuchVersion(c.bucket, c.key)
			}
			if o.DeleteMarker {
				c.w.Header().Set("x-oss-delete-marker", "true")
				c.w.Header().Set("x-oss-version-id", shownVersion(o))
				e := newError(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
				e.bucketName, e.key = c.bucket, c.key
				return e
			}
		} else {
			o = b.Objects[c.key]
		}
		if o == nil {
			if b.latestIsDeleteMarker(c.key) {
				c.w.Header().Set("x-oss-delete-marker", "true")
			}
			return errNoSuchKey(c.bucket, c.key)
		}
		return nil
	}); e != nil {
		return e
	}
	h := c.w.Header()
	h.Set("ETag", o.ETag)
	h.Set("x-oss-hash-crc64ecma", strconv.FormatUint(o.CRC64, 10))
	h.Set("x-oss-object-type", "Normal")
	h.Set("x-oss-storage-class", o.StorageClass)
	o.setSSEHeaders(h)
	if o.VersionID != "" {
		h.Set("x-oss-version-id", o.VersionID)
	}
	if q.Has("objectMeta") {
		// GetObjectMeta returns only the basic metadata, never a body.
		h.Set("Content-Length", strconv.Itoa(len(o.Data)))
		h.Set("Last-Modified", o.LastModified.Format(http.TimeFormat))
		c.w.WriteHeader(http.StatusOK)
		return nil
	}
	h.Set("Content-Type", o.ContentType)
	h.Set("Content-MD5", o.ContentMD5)
	for k, v := range o.Meta {
		h.Set(k, v)
	}
	for k, v := range map[string]string{"Cache-Control": o.CacheControl,
		"Content-Disposition": o.ContentDisposition, "Content-Encoding": o.ContentEncoding} {
		if v != "" {
			h.Set(k, v)
		}
	}
	sw := &statusWriter{ResponseWriter: c.w}
	http.ServeContent(sw, c.r, "", o.LastModified, bytes.NewReader(o.Data))
	switch sw.status {
	case http.StatusPreconditionFailed:
		c.errCode = "PreconditionFailed"
	case http.StatusRequestedRangeNotSatisfiable:
		c.errCode = "InvalidRange"
	}
	return nil
}

// statusWriter remembers the status ServeContent chose, for the observer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// deleteObject succeeds whether or not the key exists, as OSS does. Without a
// versionId it adds a delete marker in a versioned bucket; with one it removes
// that version (or delete marker) for good.
func deleteObject(c *call) *ossError {
	q := c.r.URL.Query()
	var gone *object
	var versionID string
	if e := c.withBucket(true, func(b *bucket) *ossError {
		if q.Has("versionId") {
			versionID = q.Get("versionId")
			if versionID == "" {
				return errInvalidArgument("versionId", "", "The version id must not be empty.")
			}
			gone = b.deleteVersion(c.key, versionID)
			return nil
		}
		gone = b.deleteCurrent(c.key, &object{LastModified: c.h.now().UTC().Truncate(time.Second)})
		if gone != nil {
			versionID = shownVersion(gone)
		}
		return nil
	}); e != nil {
		return e
	}
	h := c.w.Header()
	if versionID != "" {
		h.Set("x-oss-version-id", versionID)
	}
	if gone != nil && gone.DeleteMarker {
		h.Set("x-oss-delete-marker", "true")
	}
	return c.writeEmpty(http.StatusNoContent)
}
