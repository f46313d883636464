package oss

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
)

// ObjectError is GetObjectAs's refusal: OSS's error code (AccessDenied, NoSuchBucket,
// NoSuchKey...) and message, as the service would answer the request.
type ObjectError struct {
	Status        int
	Code, Message string
}

func (e *ObjectError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// GetObjectAs answers a GetObject of bucket/key signed with key, the way a request signed with it
// would be answered once its signature checks out: the bucket policy judges the key's holder
// (authorize), then the object is read as GetObject reads it. It is the node agent's way to
// fetch what a node would fetch with its instance role's keys (internal/emulator/nodeagent,
// bundle.go) without signing a request to itself.
func (h *Handler) GetObjectAs(key Key, bucket, object string) ([]byte, error) {
	return h.objectAs(key, http.MethodGet, bucket, object, nil, operation{name: "GetObject", run: getObject})
}

// PutObjectAs stores body at bucket/key as a PutObject signed with key would: judged by the bucket
// policy first. The node agent plays a control-plane node's join-token timer with it (tokens.go).
func (h *Handler) PutObjectAs(key Key, bucket, object string, body []byte) error {
	_, err := h.objectAs(key, http.MethodPut, bucket, object, body, operation{name: "PutObject", run: putObject})
	return err
}

func (h *Handler) objectAs(key Key, method, bucket, object string, body []byte, op operation) ([]byte, error) {
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(method, "/"+url.PathEscape(bucket)+"/"+(&url.URL{Path: object}).EscapedPath(), bytes.NewReader(body))
	c := &call{h: h, w: rec, r: r, requestID: newRequestID(), bucket: bucket, key: object, hasKey: true, caller: key}
	e := c.authorize(op)
	if e == nil {
		e = op.run(c)
	}
	if e != nil {
		return nil, &ObjectError{Status: e.status, Code: e.code, Message: e.message}
	}
	res := rec.Result()
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		return nil, &ObjectError{Status: res.StatusCode, Code: http.StatusText(res.StatusCode)}
	}
	return io.ReadAll(res.Body)
}
