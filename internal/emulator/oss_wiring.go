package emulator

import "net/http"

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
}

// newOSSBackend is replaced once package oss is wired in.
var newOSSBackend = func(s *Server) ossBackend { return nil }
