package oss

import (
	"net/http"
	"strings"
)

// Server-side encryption of an object. PutObject takes x-oss-server-side-encryption (AES256, KMS
// or SM4) and, with KMS only, x-oss-server-side-encryption-key-id, the KMS key to use
// (https://www.alibabacloud.com/help/en/oss/developer-reference/putobject); an object put without
// them gets the bucket's default encryption as it is at that moment. PutObject, GetObject and
// HeadObject answer the object's in the same headers. The emulator keeps the data as it came:
// what is recorded is only what OSS would say about it. When KMS names no key, OSS uses a key it
// manages and names it; the emulator, which has no KMS, answers no key id then.

const (
	sseHeader      = "x-oss-server-side-encryption"
	sseKeyIDHeader = "x-oss-server-side-encryption-key-id"
)

// requestedSSE reads the encryption a PutObject asks for: "" and "" when it asks for none.
func requestedSSE(h http.Header) (alg, keyID string, e *ossError) {
	alg, keyID = h.Get(sseHeader), h.Get(sseKeyIDHeader)
	switch alg {
	case "", "AES256", "KMS", "SM4":
	default:
		return "", "", errInvalidArgument(sseHeader, alg, "The encryption method specified is not supported.")
	}
	if keyID != "" && alg != "KMS" {
		return "", "", errInvalidArgument(sseKeyIDHeader, keyID,
			"x-oss-server-side-encryption-key-id is only allowed when x-oss-server-side-encryption is KMS.")
	}
	return alg, keyID, nil
}

// applySSE records on o the encryption asked for, or else the bucket's default. Caller holds the
// handler's lock.
func (o *object) applySSE(b *bucket, alg, keyID string) {
	if alg == "" && b.Encryption != nil {
		alg = deref(b.Encryption.SSEAlgorithm)
		if strings.EqualFold(alg, "KMS") {
			keyID = deref(b.Encryption.KMSMasterKeyID)
		}
	}
	o.SSE, o.SSEKeyID = alg, keyID
}

// setSSEHeaders answers the object's encryption.
func (o *object) setSSEHeaders(h http.Header) {
	if o.SSE == "" {
		return
	}
	h.Set(sseHeader, o.SSE)
	if o.SSEKeyID != "" {
		h.Set(sseKeyIDHeader, o.SSEKeyID)
	}
}
