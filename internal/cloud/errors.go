package cloud

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	sdkerrors "github.com/aliyun/alibaba-cloud-sdk-go/sdk/errors"
)

// APIError is an answer from the service that carries a vendor error code. It is the only error
// type resources need to look at: callers match on Code, never on message text.
type APIError struct {
	Product    string
	Action     string
	Code       string
	Message    string
	RequestID  string
	HTTPStatus int
	// AccessKeyID is set for signature and credential errors so the user can tell which key was
	// rejected. Never the secret.
	AccessKeyID string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", e.Product, e.Action, e.Code)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request id %s)", e.RequestID)
	}
	return b.String()
}

// ErrorCode returns the vendor code of err, or "" when err is not an answer from the service.
func ErrorCode(err error) string {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code
	}
	return ""
}

// IsCode reports whether err is an API error with one of the given codes.
func IsCode(err error, codes ...string) bool {
	code := ErrorCode(err)
	if code == "" {
		return false
	}
	for _, c := range codes {
		if code == c {
			return true
		}
	}
	return false
}

// IsDependencyViolation reports whether err says an object still has dependents. The vendor
// answers the bare code or a variant naming the dependent (DependencyViolation.VSwitch,
// .SecurityGroup, .Instance, .NatGateway, .SnatEntry, .EIPS, .EnhancedNatgw...), and a delete
// waits out each of them alike.
func IsDependencyViolation(err error) bool {
	code := ErrorCode(err)
	return code == "DependencyViolation" || strings.HasPrefix(code, "DependencyViolation.")
}

// ErrNotFound is the typed not-found of every product: errors.Is(err, ErrNotFound) holds for a
// service answer that says the object does not exist and for the answer a finder (Find*) gives
// when a Describe call succeeds but lists nothing. IsNotFound is the short form.
var ErrNotFound = errors.New("not found")

// Is makes an APIError with a not-found code match ErrNotFound.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && isNotFoundCode(e.Code)
}

// IsNotFound reports whether err says the object does not exist. Alibaba Cloud spells this many
// ways (InvalidInstanceId.NotFound, InvalidVpcId.NotFound, NoSuchBucket...), all ending in
// NotFound or starting with NoSuch, plus a few historical exceptions.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound)
}

func isNotFoundCode(code string) bool {
	return strings.HasSuffix(code, ".NotFound") || strings.HasSuffix(code, "NotFound") ||
		strings.HasPrefix(code, "NoSuch")
}

// notFound builds the typed not-found answer finders return when a Describe call succeeds but
// lists nothing: it matches ErrNotFound like the service's own *.NotFound codes.
func notFound(product, action, code, what string) error {
	return &APIError{Product: product, Action: action, Code: code, Message: fmt.Sprintf("%s does not exist", what)}
}

// retryableCodes are codes that mean "the same call may succeed later" on every API.
var retryableCodes = []string{
	"Throttling", "Throttling.User", "Throttling.Api", "Throttling.Resource", "ServiceUnavailable",
	"InternalError", "OperationConflict", "LastTokenProcessing", "IncorrectStatus.Pending",
	// Our own transport may resend a request the server had already seen (the connection dropped
	// after it arrived). Re-signing with a fresh nonce is the cure, which an API-level retry does.
	"SignatureNonceUsed",
	// OSS spells throttling and server trouble its own way.
	"ServerBusy", "RequestTimeout",
}

func isRetryableCode(code string, extra []string) bool {
	if strings.HasPrefix(code, "Throttling") {
		return true
	}
	for _, c := range retryableCodes {
		if c == code {
			return true
		}
	}
	for _, c := range extra {
		if c == code {
			return true
		}
	}
	return false
}

// fromSDKError turns what the RPC SDK returned into an APIError when it is a service answer, and
// otherwise into an error whose text cannot carry a signed URL (the SDK's client errors embed the
// underlying net/http error, which names the full request URL with AccessKeyId, Signature and
// SecurityToken in its query string).
func fromSDKError(product, action, accessKeyID string, err error) error {
	if err == nil {
		return nil
	}
	var serverErr *sdkerrors.ServerError
	if errors.As(err, &serverErr) {
		apiErr := &APIError{
			Product:    product,
			Action:     action,
			Code:       serverErr.ErrorCode(),
			Message:    serverErr.Message(),
			RequestID:  serverErr.RequestId(),
			HTTPStatus: serverErr.HttpStatus(),
		}
		if apiErr.Code == "" {
			apiErr.Code = fmt.Sprintf("HTTP%d", apiErr.HTTPStatus)
		}
		explainCredentialError(apiErr, accessKeyID)
		return apiErr
	}
	return &TransportError{Product: product, Action: action, Err: transportCause(err)}
}

// transportCause digs out the network error (it names the address and what went wrong, and no
// URL) from the layers of wrapping the SDKs add; anything else is returned redacted.
func transportCause(err error) error {
	// The RPC SDK's ClientError hides its cause behind OriginError instead of Unwrap.
	for e := err; e != nil; {
		var opErr *net.OpError
		if errors.As(e, &opErr) {
			return opErr
		}
		origin, ok := e.(interface{ OriginError() error })
		if !ok {
			break
		}
		e = origin.OriginError()
	}
	return redactError(err)
}

// explainCredentialError rewrites the answers that mean "your credentials are wrong" into plain
// words that name the access key (never the secret) and say what to check.
func explainCredentialError(e *APIError, accessKeyID string) {
	switch e.Code {
	case "SignatureDoesNotMatch", "IncompleteSignature":
		e.AccessKeyID = accessKeyID
		e.Message = fmt.Sprintf("the service rejected the request signature made with access key %q: the secret key does not belong to this access key (check secret_key or %s)",
			accessKeyID, EnvAccessKeySecret)
	case "InvalidAccessKeyId.NotFound", "InvalidAccessKeyId", "InvalidAccessKeyId.Inactive":
		e.AccessKeyID = accessKeyID
		e.Message = fmt.Sprintf("the service does not know access key %q, or it is disabled: check access_key or %s", accessKeyID, EnvAccessKeyID)
	case "InvalidSecurityToken.Expired", "InvalidSecurityToken.Malformed", "InvalidSecurityToken.MismatchWithAccessKey", "InvalidSecurityToken":
		e.AccessKeyID = accessKeyID
		e.Message = fmt.Sprintf("the security token sent with access key %q was refused (%s): get fresh STS credentials", accessKeyID, e.Code)
	}
}

// TransportError is a call that got no answer from the service (connection refused, reset,
// timeout) after the transport's retries.
type TransportError struct {
	Product string
	Action  string
	Err     error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("%s %s: no answer from the service: %v; check the provider's endpoint (or endpoints.%s, GPUCLUSTER_ENDPOINT) and that the service is reachable from here",
		e.Product, e.Action, e.Err, e.Product)
}

func (e *TransportError) Unwrap() error { return e.Err }

// signedQuery matches the query string of a URL inside an error text. RPC requests carry their
// AccessKeyId, Signature and SecurityToken in the query, so no URL leaves this package with one.
// A query already redacted starts with "(" and is left alone, so redacting twice is harmless.
var signedQuery = regexp.MustCompile(`(https?://[^\s"?]+)\?[^\s"(][^\s"]*`)

// redactError returns an error with the same text minus every URL query string.
func redactError(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	clean := signedQuery.ReplaceAllString(text, "$1?(query redacted)")
	if clean == text {
		return err
	}
	return redactedError{text: clean, cause: err}
}

// redactedError keeps the cause for errors.Is (context.Canceled and friends) while its text is
// the redacted one.
type redactedError struct {
	text  string
	cause error
}

func (e redactedError) Error() string { return e.text }

func (e redactedError) Is(target error) bool { return errors.Is(e.cause, target) }
