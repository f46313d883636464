package oss

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Limits on request bodies. OSS allows 5 GiB objects, but the emulator keeps
// everything in memory, so it refuses large bodies instead of exhausting RAM.
const (
	maxXMLBody    = 1 << 20
	maxObjectBody = 64 << 20
)

// readBody reads the whole request body up to limit and, when the client sent
// Content-MD5 (the SDK does for every XML body), checks it.
func (c *call) readBody(limit int64) ([]byte, *ossError) {
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, newError(http.StatusBadRequest, "EntityTooLarge",
				"Your proposed upload exceeds the emulator's maximum of %d bytes.", limit)
		}
		return nil, newError(http.StatusBadRequest, "IncompleteBody", "Could not read the request body: %v", err)
	}
	if want := c.r.Header.Get("Content-MD5"); want != "" {
		sum := md5.Sum(body)
		if base64.StdEncoding.EncodeToString(sum[:]) != want {
			return nil, newError(http.StatusBadRequest, "InvalidDigest",
				"The Content-MD5 you specified is not valid.")
		}
	}
	return body, nil
}

// decodeXML checks that body's root element is root and decodes it into v.
// Checking the root name catches a body meant for another operation, which
// encoding/xml would otherwise accept silently when v has no XMLName.
func decodeXML(body []byte, root string, v any) *ossError {
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return errMalformedXML(fmt.Sprintf("expected a <%s> document", root))
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if start.Name.Local != root {
			return errMalformedXML(fmt.Sprintf("root element is <%s>, expected <%s>", start.Name.Local, root))
		}
		if err := dec.DecodeElement(v, &start); err != nil {
			return errMalformedXML(err.Error())
		}
		return nil
	}
}

// readXML reads the request body and decodes it as a <root> document.
func (c *call) readXML(root string, v any) *ossError {
	body, e := c.readBody(maxXMLBody)
	if e != nil {
		return e
	}
	return decodeXML(body, root, v)
}

// writeXML sends v as a 200 XML document.
func (c *call) writeXML(v any) *ossError {
	out, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		return newError(http.StatusInternalServerError, "InternalError", "encoding the response: %v", err)
	}
	out = append([]byte(xml.Header), out...)
	h := c.w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", fmt.Sprint(len(out)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(out)
	return nil
}

// writeEmpty sends a body-less success status (200 for puts, 204 for deletes).
func (c *call) writeEmpty(status int) *ossError {
	if status != http.StatusNoContent {
		c.w.Header().Set("Content-Length", "0")
	}
	c.w.WriteHeader(status)
	return nil
}
