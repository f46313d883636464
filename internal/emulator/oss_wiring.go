package emulator

import (
	"net/http"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

// ossBackend is what the top-level handler needs from package oss (written
// separately); keeping it an interface lets this package build and test on
// its own.
type ossBackend interface {
	http.Handler
	Buckets() []map[string]any
	Reset()
	MarshalState() ([]byte, error)
	UnmarshalState([]byte) error
	SetObserver(func(action, errorCode string))
	GetObjectAs(key oss.Key, bucket, object string) ([]byte, error)
	PutObjectAs(key oss.Key, bucket, object string, body []byte) error
}

// newOSSBackend builds the OSS handler with the same credentials and clock
// as the RPC side (STS keys included).
func newOSSBackend(s *Server) ossBackend {
	return oss.NewHandler(oss.Config{Credentials: s.ossCredentials, Now: s.now})
}
