package oss

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
)

// ossError is a service error in the shape OSS puts on the wire. Handlers
// return it; writeError turns it into the XML body the SDK parses into
// oss.ServiceError (Code, Message, RequestId, EC).
type ossError struct {
	status  int
	code    string
	message string

	// Optional elements OSS adds for some codes. They help whoever debugs a
	// failing test: SignatureDoesNotMatch carries the server's StringToSign so
	// the client side can diff it against its own.
	bucketName        string
	key               string
	accessKeyID       string
	signatureProvided string
	stringToSign      string
	canonicalRequest  string
	argumentName      string
	argumentValue     string
}

func (e *ossError) Error() string { return e.code + ": " + e.message }

// errorXML is the body. Field order follows what OSS sends.
type errorXML struct {
	XMLName           xml.Name `xml:"Error"`
	Code              string   `xml:"Code"`
	Message           string   `xml:"Message"`
	RequestID         string   `xml:"RequestId"`
	HostID            string   `xml:"HostId"`
	BucketName        string   `xml:"BucketName,omitempty"`
	Key               string   `xml:"Key,omitempty"`
	OSSAccessKeyID    string   `xml:"OSSAccessKeyId,omitempty"`
	SignatureProvided string   `xml:"SignatureProvided,omitempty"`
	StringToSign      string   `xml:"StringToSign,omitempty"`
	CanonicalRequest  string   `xml:"CanonicalRequest,omitempty"`
	ArgumentName      string   `xml:"ArgumentName,omitempty"`
	ArgumentValue     string   `xml:"ArgumentValue,omitempty"`
}

func newError(status int, code, format string, args ...any) *ossError {
	return &ossError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// Constructors for the codes used in more than one place; the messages are
// the ones OSS returns, so tests and users see familiar text.

func errNoSuchBucket(bucket string) *ossError {
	e := newError(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist.")
	e.bucketName = bucket
	return e
}

func errNoSuchKey(bucket, key string) *ossError {
	e := newError(http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
	e.bucketName, e.key = bucket, key
	return e
}

func errMalformedXML(detail string) *ossError {
	return newError(http.StatusBadRequest, "MalformedXML",
		"The XML you provided was not well-formed or did not validate against our published schema: %s", detail)
}

func errInvalidArgument(name, value, format string, args ...any) *ossError {
	e := newError(http.StatusBadRequest, "InvalidArgument", format, args...)
	e.argumentName, e.argumentValue = name, value
	return e
}

func errAccessDenied(format string, args ...any) *ossError {
	return newError(http.StatusForbidden, "AccessDenied", format, args...)
}

// writeError sends e as OSS does. HEAD responses cannot carry a body, so OSS
// (and the SDK, see tryConvertServiceError) put the base64 XML into the
// x-oss-err header instead.
func (c *call) writeError(e *ossError) {
	body := errorXML{
		Code:              e.code,
		Message:           e.message,
		RequestID:         c.requestID,
		HostID:            c.r.Host,
		BucketName:        e.bucketName,
		Key:               e.key,
		OSSAccessKeyID:    e.accessKeyID,
		SignatureProvided: e.signatureProvided,
		StringToSign:      e.stringToSign,
		CanonicalRequest:  e.canonicalRequest,
		ArgumentName:      e.argumentName,
		ArgumentValue:     e.argumentValue,
	}
	out, err := xml.MarshalIndent(body, "", "  ")
	if err != nil { // cannot happen with plain strings; keep the status anyway
		out = nil
	}
	out = append([]byte(xml.Header), out...)
	c.errCode = e.code
	h := c.w.Header()
	h.Set("Content-Type", "application/xml")
	if c.r.Method == http.MethodHead {
		h.Set("x-oss-err", base64.StdEncoding.EncodeToString(out))
		c.w.WriteHeader(e.status)
		return
	}
	h.Set("Content-Length", fmt.Sprint(len(out)))
	c.w.WriteHeader(e.status)
	_, _ = c.w.Write(out)
}
