package core

import "fmt"

// Error is an error answered in the vendor's RPC error shape. Status and Code follow the
// vendor's RPC error format: a non-2xx status with a JSON body of RequestId, HostId, Code,
// Message and Recommend (400 MissingParameter, InvalidParameter, Throttling.User,
// IncompleteSignature; 403 Forbidden.RAM, IncorrectInstanceStatus, SignatureDoesNotMatch; 404
// InvalidAccessKeyId.NotFound; 500 InternalError; 503 ServiceUnavailable). Where the vendor
// does not state a status (stock, quota, dependency errors) the choice is documented at the
// constructor.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errf builds an Error with a formatted message.
func Errf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrMissing is the vendor's 400 MissingParameter.
func ErrMissing(name string) *Error {
	return Errf(400, "MissingParameter", "The input parameter %q that is mandatory for processing this request is not supplied.", name)
}

// ErrInvalid is the vendor's 400 InvalidParameter.
func ErrInvalid(name, format string, args ...any) *Error {
	return Errf(400, "InvalidParameter", "The specified parameter %q is not valid: %s", name, fmt.Sprintf(format, args...))
}

// ErrNotFound answers 404 with a vendor-style "<What>.NotFound" code.
func ErrNotFound(code, id string) *Error {
	return Errf(404, code, "The specified resource %q does not exist.", id)
}

// ErrDependency is answered when a resource is still in use. The vendor's error reference does
// not state its status; the VPC API answers 400, so the emulator does.
func ErrDependency(format string, args ...any) *Error {
	return Errf(400, "DependencyViolation", format, args...)
}

// ErrStatus is the vendor's 403 IncorrectInstanceStatus.
func ErrStatus(format string, args ...any) *Error {
	return Errf(403, "IncorrectInstanceStatus", format, args...)
}
