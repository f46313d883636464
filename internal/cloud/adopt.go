package cloud

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// ClientToken derives a ClientToken from what identifies one create call, plus a generation.
// The same request gets the same token, so a create interrupted after the service acted is
// answered with the object it made instead of a duplicate; a token whose object has since been
// deleted is skipped by moving to the next generation (see CreateOrAdopt).
func ClientToken(gen int, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return fmt.Sprintf("gpc-%s-%d", hex.EncodeToString(h[:])[:40], gen)
}

// maxTokenGenerations bounds CreateOrAdopt's walk past tokens of deleted objects.
const maxTokenGenerations = 32

// CreateOrAdopt runs create with the token of generation 0, 1, ... (ClientToken over parts)
// until it returns an object that exists: an object left by an interrupted apply is adopted
// (the service answers a repeated token with the object it made), one since deleted is
// skipped. exists reports a not-found error (IsNotFound) for a deleted object.
func CreateOrAdopt(what string, parts []string, create func(token string) (string, error), exists func(id string) error) (string, error) {
	for gen := 0; gen < maxTokenGenerations; gen++ {
		id, err := create(ClientToken(gen, parts...))
		if IsCode(err, "IdempotentParameterMismatch") {
			continue
		}
		if err != nil {
			return "", err
		}
		err = exists(id)
		if err == nil {
			return id, nil
		}
		if !IsNotFound(err) {
			return "", err
		}
	}
	return "", fmt.Errorf("creating %s: every client token up to generation %d answered with a deleted object", what, maxTokenGenerations)
}
