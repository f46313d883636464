package oss

import (
	"encoding/xml"
	"net/http"
	"sort"
	"strings"
)

// Object versions, as OSS keeps them once versioning has been turned on.
//
// b.Objects[key] is the current version of a key when that is an object. Older
// versions and delete markers live in b.Versions[key], newest first; whatever
// b.Objects holds is newer than all of them. A key whose newest entry is a
// delete marker has no b.Objects entry, so GetObject and ListObjects do not
// see it, while ListObjectVersions lists every entry and DeleteBucket refuses
// a bucket that still holds any.
//
// Writes in a bucket with versioning Enabled get a fresh version id; with
// Suspended they get the id "null" and replace the key's previous "null"
// version. Objects written before versioning was first turned on carry no id
// and are shown as "null" too. A bucket that never had versioning keeps one
// copy per key, as before.

// nullVersion is the version id of objects written while versioning was off
// or suspended.
const nullVersion = "null"

func versionIs(o *object, id string) bool {
	if o.VersionID == "" {
		return id == nullVersion
	}
	return o.VersionID == id
}

func shownVersion(o *object) string {
	if o.VersionID == "" {
		return nullVersion
	}
	return o.VersionID
}

// stash moves the key's current object, if any, to the front of its history.
func (b *bucket) stash(key string) {
	cur := b.Objects[key]
	if cur == nil {
		return
	}
	delete(b.Objects, key)
	if b.Versions == nil {
		b.Versions = map[string][]*object{}
	}
	b.Versions[key] = append([]*object{cur}, b.Versions[key]...)
}

// dropNull removes the key's "null" version (current or older), which a write
// in a suspended bucket replaces.
func (b *bucket) dropNull(key string) {
	if cur := b.Objects[key]; cur != nil && versionIs(cur, nullVersion) {
		delete(b.Objects, key)
	}
	b.removeOlder(key, nullVersion)
	b.promote(key)
}

// removeOlder deletes the version id from the key's history; it reports the
// entry removed, or nil.
func (b *bucket) removeOlder(key, id string) *object {
	hist := b.Versions[key]
	for i, o := range hist {
		if versionIs(o, id) {
			hist = append(hist[:i:i], hist[i+1:]...)
			if len(hist) == 0 {
				delete(b.Versions, key)
			} else {
				b.Versions[key] = hist
			}
			return o
		}
	}
	return nil
}

// promote makes the newest older version current when the key has no current
// object and that version is not a delete marker.
func (b *bucket) promote(key string) {
	if b.Objects[key] != nil {
		return
	}
	hist := b.Versions[key]
	if len(hist) == 0 || hist[0].DeleteMarker {
		return
	}
	b.Objects[key] = hist[0]
	if len(hist) == 1 {
		delete(b.Versions, key)
	} else {
		b.Versions[key] = hist[1:]
	}
}

// putVersion stores o as the key's newest version and sets its version id.
func (b *bucket) putVersion(key string, o *object) {
	switch b.Versioning {
	case "Enabled":
		o.VersionID = newRuleID()
		b.stash(key)
	case "Suspended":
		o.VersionID = nullVersion
		b.dropNull(key)
		b.stash(key)
	}
	b.Objects[key] = o
}

// deleteCurrent is DeleteObject without a version id: in a versioned bucket it
// adds a delete marker (returned) in front of the key's versions; otherwise it
// removes the object.
func (b *bucket) deleteCurrent(key string, marker *object) *object {
	switch b.Versioning {
	case "Enabled":
		marker.VersionID = newRuleID()
	case "Suspended":
		marker.VersionID = nullVersion
		b.dropNull(key)
	default:
		delete(b.Objects, key)
		return nil
	}
	b.stash(key)
	marker.DeleteMarker = true
	if b.Versions == nil {
		b.Versions = map[string][]*object{}
	}
	b.Versions[key] = append([]*object{marker}, b.Versions[key]...)
	return marker
}

// deleteVersion removes one version (or delete marker) of a key for good and
// returns it, or nil when the key has no such version.
func (b *bucket) deleteVersion(key, id string) *object {
	var gone *object
	if cur := b.Objects[key]; cur != nil && versionIs(cur, id) {
		delete(b.Objects, key)
		gone = cur
	} else {
		gone = b.removeOlder(key, id)
	}
	b.promote(key)
	return gone
}

// findVersion returns one version of a key (possibly a delete marker), or nil.
func (b *bucket) findVersion(key, id string) *object {
	if cur := b.Objects[key]; cur != nil && versionIs(cur, id) {
		return cur
	}
	for _, o := range b.Versions[key] {
		if versionIs(o, id) {
			return o
		}
	}
	return nil
}

// latestIsDeleteMarker reports whether GetObject on key should say the
// object was deleted by a delete marker.
func (b *bucket) latestIsDeleteMarker(key string) bool {
	hist := b.Versions[key]
	return b.Objects[key] == nil && len(hist) > 0 && hist[0].DeleteMarker
}

// versionEntries lists every version of the bucket in ListObjectVersions
// order: keys ascending, each key's versions newest first.
func (b *bucket) versionEntries(prefix string) []versionEntry {
	keys := make([]string, 0, len(b.Objects)+len(b.Versions))
	seen := map[string]bool{}
	add := func(k string) {
		if strings.HasPrefix(k, prefix) && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for k := range b.Objects {
		add(k)
	}
	for k := range b.Versions {
		add(k)
	}
	sort.Strings(keys)
	var out []versionEntry
	for _, k := range keys {
		latest := true
		if cur := b.Objects[k]; cur != nil {
			out = append(out, versionEntry{key: k, o: cur, latest: true})
			latest = false
		}
		for _, o := range b.Versions[k] {
			out = append(out, versionEntry{key: k, o: o, latest: latest})
			latest = false
		}
	}
	return out
}

// versionCount is how many object versions and delete markers the bucket
// holds.
func (b *bucket) versionCount() int {
	n := len(b.Objects)
	for _, h := range b.Versions {
		n += len(h)
	}
	return n
}

type versionEntry struct {
	key    string
	o      *object
	latest bool
}

// Response of ListObjectVersions (GET /?versions). Versions and delete markers
// come interleaved in listing order, each element named by its XMLName.
type listVersionsResultXML struct {
	XMLName             xml.Name          `xml:"ListVersionsResult"`
	Name                string            `xml:"Name"`
	Prefix              string            `xml:"Prefix"`
	KeyMarker           string            `xml:"KeyMarker"`
	VersionIDMarker     string            `xml:"VersionIdMarker"`
	MaxKeys             int               `xml:"MaxKeys"`
	Delimiter           string            `xml:"Delimiter"`
	EncodingType        string            `xml:"EncodingType,omitempty"`
	IsTruncated         bool              `xml:"IsTruncated"`
	NextKeyMarker       string            `xml:"NextKeyMarker,omitempty"`
	NextVersionIDMarker string            `xml:"NextVersionIdMarker,omitempty"`
	Entries             []any             `xml:",any"`
	CommonPrefixes      []commonPrefixXML `xml:"CommonPrefixes"`
}

type versionXML struct {
	XMLName      xml.Name `xml:"Version"`
	Key          string   `xml:"Key"`
	VersionID    string   `xml:"VersionId"`
	IsLatest     bool     `xml:"IsLatest"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	Type         string   `xml:"Type"`
	Size         int      `xml:"Size"`
	StorageClass string   `xml:"StorageClass"`
	Owner        ownerXML `xml:"Owner"`
}

type deleteMarkerXML struct {
	XMLName      xml.Name `xml:"DeleteMarker"`
	Key          string   `xml:"Key"`
	VersionID    string   `xml:"VersionId"`
	IsLatest     bool     `xml:"IsLatest"`
	LastModified string   `xml:"LastModified"`
	Owner        ownerXML `xml:"Owner"`
}

// listObjectVersions pages by key-marker and version-id-marker: without a
// version marker the page starts after every version of key-marker; with one
// it starts at the version after it within key-marker.
func listObjectVersions(c *call) *ossError {
	prefix, delimiter, maxKeys, enc, e := listParams(c)
	if e != nil {
		return e
	}
	q := c.r.URL.Query()
	keyMarker, versionMarker := q.Get("key-marker"), q.Get("version-id-marker")
	if versionMarker != "" && keyMarker == "" {
		return errInvalidArgument("version-id-marker", versionMarker, "A version-id-marker cannot be specified without a key-marker.")
	}
	out := listVersionsResultXML{Name: c.bucket, Prefix: encodeKey(prefix, enc), KeyMarker: encodeKey(keyMarker, enc),
		VersionIDMarker: versionMarker, MaxKeys: maxKeys, Delimiter: encodeKey(delimiter, enc)}
	if enc {
		out.EncodingType = "url"
	}
	e = c.withBucket(false, func(b *bucket) *ossError {
		entries := b.versionEntries(prefix)
		start := 0
		after := resumeAfter(keyMarker, delimiter)
		for start < len(entries) && entries[start].key < after {
			start++
		}
		if versionMarker != "" {
			// Within key-marker, skip up to and including the marker version.
			i := start
			for i < len(entries) && entries[i].key == keyMarker && !versionIs(entries[i].o, versionMarker) {
				i++
			}
			if i < len(entries) && entries[i].key == keyMarker {
				start = i + 1
			} else {
				for start < len(entries) && entries[start].key == keyMarker {
					start++
				}
			}
		} else {
			for start < len(entries) && entries[start].key == keyMarker {
				start++
			}
		}
		seenPrefix := map[string]bool{}
		n := 0
		var lastKey, lastVersion string
		for _, ent := range entries[start:] {
			cp := ""
			if delimiter != "" {
				if i := strings.Index(ent.key[len(prefix):], delimiter); i >= 0 {
					cp = ent.key[:len(prefix)+i+len(delimiter)]
				}
			}
			if cp != "" && seenPrefix[cp] {
				continue
			}
			if n == maxKeys {
				out.IsTruncated = true
				out.NextKeyMarker, out.NextVersionIDMarker = encodeKey(lastKey, enc), lastVersion
				break
			}
			n++
			if cp != "" {
				seenPrefix[cp] = true
				out.CommonPrefixes = append(out.CommonPrefixes, commonPrefixXML{encodeKey(cp, enc)})
				lastKey, lastVersion = cp, ""
				continue
			}
			o := ent.o
			lastKey, lastVersion = ent.key, shownVersion(o)
			if o.DeleteMarker {
				out.Entries = append(out.Entries, deleteMarkerXML{Key: encodeKey(ent.key, enc), VersionID: shownVersion(o),
					IsLatest: ent.latest, LastModified: ossTime(o.LastModified), Owner: owner()})
				continue
			}
			out.Entries = append(out.Entries, versionXML{Key: encodeKey(ent.key, enc), VersionID: shownVersion(o),
				IsLatest: ent.latest, LastModified: ossTime(o.LastModified), ETag: o.ETag, Type: "Normal",
				Size: len(o.Data), StorageClass: o.StorageClass, Owner: owner()})
		}
		return nil
	})
	if e != nil {
		return e
	}
	return c.writeXML(out)
}

// errNoSuchVersion answers a request for a version id the key does not have.
func errNoSuchVersion(bucket, key string) *ossError {
	e := newError(http.StatusNotFound, "NoSuchVersion", "The specified version does not exist.")
	e.bucketName, e.key = bucket, key
	return e
}
