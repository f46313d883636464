package oss

import (
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
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/"+url.PathEscape(bucket)+"/"+(&url.URL{Path: object}).EscapedPath(), nil)
	c := &call{h: h, w: rec, r: r, requestID: newRequestID(), bucket: bucket, key: object, hasKey: true, caller: key}
	op := operation{name: "GetObject", run: getObject}
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
